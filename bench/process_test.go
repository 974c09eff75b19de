package bench

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
)

// The bench test binary also runs the processes of BenchmarkOutOfProcess:
// TestMain hands it to runRole when roleEnv names one. Every role prints
// one line to standard output once it serves, and ends when its standard
// input ends, so that it never outlives the benchmark that started it.
const (
	roleEnv         = "BENCH_ROLE"          // roleUpstream or roleProxy
	kindEnv         = "BENCH_KIND"          // the proxy's transport: a kind
	upstreamEnv     = "BENCH_UPSTREAM"      // the proxy's upstream: its URL
	upstreamCertEnv = "BENCH_UPSTREAM_CERT" // the upstream's certificate, DER in base64

	roleUpstream = "upstream"
	roleProxy    = "proxy"
)

// runRole runs the role named by roleEnv and returns the exit code.
func runRole(role string) int {
	var err error
	switch role {
	case roleUpstream:
		err = serveUpstream(os.Stdin, os.Stdout)
	case roleProxy:
		err = serveProxy(os.Getenv(kindEnv), os.Getenv(upstreamEnv), os.Getenv(upstreamCertEnv), os.Stdin, os.Stdout)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench %s: %v\n", role, err)
		return 1
	}
	return 0
}

// serveUpstream serves the harness's upstream (TLS HTTP/2, a checksum of
// every body, no GOAWAY) until in ends. Its line: the URL, a space, and its
// certificate in base64.
func serveUpstream(in io.Reader, out io.Writer) error {
	u := newUpstream(0)
	defer u.srv.Close()
	if _, err := fmt.Fprintf(out, "%s %s\n", u.srv.URL,
		base64.StdEncoding.EncodeToString(u.srv.Certificate().Raw)); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, in)
	return err
}

// serveProxy serves an httputil.ReverseProxy over cleartext HTTP/1.1 that
// sends everything to the upstream at upstream (trusting only cert) through
// a transport of the given kind. Its line: its URL. Then it answers each
// line of in, a command, with a line, until in ends:
//
//	usage               its usage so far (usage.String)
//	profile start PATH  "ok" once it writes a CPU profile to PATH
//	profile stop        "ok" once that profile is written
func serveProxy(kind, upstream, cert string, in io.Reader, out io.Writer) error {
	up, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	der, err := base64.StdEncoding.DecodeString(cert)
	if err != nil {
		return fmt.Errorf("the upstream's certificate: %w", err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("the upstream's certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	inner := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
		DisableCompression:  true,
	}
	defer inner.CloseIdleConnections()
	ut, err := newUnderTest(stackConfig{kind: kind}, inner)
	if err != nil {
		return err
	}
	eh := ut.errorHandler
	if eh == nil {
		eh = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
	}
	front := httptest.NewUnstartedServer(newReverseProxy(up, ut.rt, eh))
	var reads ioCount
	front.Listener = countingListener{Listener: front.Listener, reads: &reads}
	front.Config.ErrorLog = proxytest.QuietLog()
	front.Start()
	defer front.Close()
	if _, err := fmt.Fprintln(out, front.URL); err != nil {
		return err
	}
	var profile *os.File
	defer func() {
		if profile != nil {
			pprof.StopCPUProfile()
			profile.Close()
		}
	}()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		reply := "ok"
		switch cmd := sc.Text(); {
		case cmd == "usage":
			u := readUsage()
			u.inReads, u.inBytes = uint64(reads.ops.Load()), uint64(reads.bytes.Load())
			reply = u.String()
		case strings.HasPrefix(cmd, "profile start ") && profile == nil:
			if profile, err = os.Create(strings.TrimPrefix(cmd, "profile start ")); err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(profile); err != nil {
				return err
			}
		case cmd == "profile stop" && profile != nil:
			pprof.StopCPUProfile()
			err, profile = profile.Close(), nil
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("unknown command %q", cmd)
		}
		if _, err := fmt.Fprintln(out, reply); err != nil {
			return err
		}
	}
	return sc.Err()
}

// usage is what a process has used so far: CPU time, context switches and
// page faults from getrusage, heap allocations and GC cycles from
// runtime/metrics, and, for a proxy, the reads of its inbound connections.
type usage struct {
	cpu              time.Duration
	vcsw, ivcsw      int64 // voluntary and involuntary context switches
	faults           int64 // minor page faults
	allocBytes       uint64
	allocObjects     uint64
	gcCycles         uint64
	inReads, inBytes uint64
}

var usageMetrics = []string{"/gc/heap/allocs:bytes", "/gc/heap/allocs:objects", "/gc/cycles/total:gc-cycles"}

// readUsage returns this process's usage so far.
func readUsage() usage {
	ms := make([]metrics.Sample, len(usageMetrics))
	for i, name := range usageMetrics {
		ms[i].Name = name
	}
	metrics.Read(ms)
	u := usage{cpu: cpuTime(),
		allocBytes: ms[0].Value.Uint64(), allocObjects: ms[1].Value.Uint64(), gcCycles: ms[2].Value.Uint64()}
	u.vcsw, u.ivcsw = switches()
	u.faults = pageFaults()
	return u
}

// The keys of usage's text form, in order.
var usageKeys = []string{"cpu-ns", "vcsw", "ivcsw", "minflt", "alloc-B", "allocs", "gc", "in-reads", "in-B"}

// String is usage's text form: key=value pairs, one per usageKeys.
func (u usage) String() string {
	vs := []uint64{uint64(u.cpu), uint64(u.vcsw), uint64(u.ivcsw), uint64(u.faults), u.allocBytes, u.allocObjects, u.gcCycles,
		u.inReads, u.inBytes}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = usageKeys[i] + "=" + strconv.FormatUint(v, 10)
	}
	return strings.Join(parts, " ")
}

// errUsage reports a line that is not usage's text form.
var errUsage = errors.New("bench: not a usage line")

// parseUsage reads usage's text form: every key once, in any order.
func parseUsage(line string) (usage, error) {
	vals := map[string]uint64{}
	for f := range strings.FieldsSeq(line) {
		k, v, ok := strings.Cut(f, "=")
		n, err := strconv.ParseUint(v, 10, 64)
		if !ok || err != nil {
			return usage{}, fmt.Errorf("%w: %q", errUsage, f)
		}
		if _, dup := vals[k]; dup {
			return usage{}, fmt.Errorf("%w: %s twice", errUsage, k)
		}
		vals[k] = n
	}
	for _, k := range usageKeys {
		if _, ok := vals[k]; !ok {
			return usage{}, fmt.Errorf("%w: no %s in %q", errUsage, k, line)
		}
	}
	if len(vals) != len(usageKeys) {
		return usage{}, fmt.Errorf("%w: unknown keys in %q", errUsage, line)
	}
	return usage{cpu: time.Duration(vals["cpu-ns"]), vcsw: int64(vals["vcsw"]), ivcsw: int64(vals["ivcsw"]), faults: int64(vals["minflt"]),
		allocBytes: vals["alloc-B"], allocObjects: vals["allocs"], gcCycles: vals["gc"],
		inReads: vals["in-reads"], inBytes: vals["in-B"]}, nil
}

// since is what was used from v to u.
func (u usage) since(v usage) usage {
	return usage{cpu: u.cpu - v.cpu, vcsw: u.vcsw - v.vcsw, ivcsw: u.ivcsw - v.ivcsw, faults: u.faults - v.faults,
		allocBytes: u.allocBytes - v.allocBytes, allocObjects: u.allocObjects - v.allocObjects,
		gcCycles: u.gcCycles - v.gcCycles, inReads: u.inReads - v.inReads, inBytes: u.inBytes - v.inBytes}
}
