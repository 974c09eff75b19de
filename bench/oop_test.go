package bench

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
)

// oopKinds are the proxies BenchmarkOutOfProcess compares: floor is the copy
// floor (floorTransport), the cheapest proxy that keeps every byte; adaptive
// is teebody in adaptive mode, whose upstream here never sends GOAWAY, so
// that it keeps only the bodies up to its own floor
// (Config.AdaptiveFloorBytes) and passes the larger ones through.
var oopKinds = []string{kindPlain, kindFloor, kindTeebody, kindAdaptive, kindReadAll}

// oopWorkers uploads are in flight at once.
const oopWorkers = 8

// An oopCell is one benchmark of a round: a body size through one proxy.
type oopCell struct {
	size int
	kind string
}

func (c oopCell) String() string {
	return fmt.Sprintf("size=%s/transport=%s", proxytest.SizeName(c.size), c.kind)
}

// oopOrder is the order a round runs its cells in: every size with every
// kind once, shuffled by a generator seeded with seed and round, so that a
// run is repeated exactly by giving it the same seed.
func oopOrder(seed, round uint64) []oopCell {
	var cs []oopCell
	for _, size := range proxySizes {
		for _, k := range oopKinds {
			cs = append(cs, oopCell{size: size, kind: k})
		}
	}
	r := rand.New(rand.NewPCG(seed, round))
	r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
	return cs
}

// BenchmarkOutOfProcess measures the proxy in a process of its own. It
// starts an upstream process (the harness's TLS HTTP/2 upstream, which
// checksums every body) and, for each cell, a proxy process (an
// httputil.ReverseProxy over the cell's transport), and is itself the
// client: cleartext HTTP/1.1 with a Content-Length, oopWorkers uploads at
// once. The cells run in the order oopOrder draws from BENCH_SEED and
// BENCH_ROUND (run.sh records both).
//
// proxy-cpu-s is the proxy process's CPU time (user and system, from its
// getrusage) per upload, proxy-vcsw its voluntary context switches per
// upload (a thread blocked: a futex, a sleep, a read with nothing to read),
// proxy-faults its minor page faults per upload (memory taken from the
// system anew), proxy-allocs and proxy-B its heap allocations per upload,
// proxy-gc its GC cycles per upload; MB/s and ns/op are the client's wall
// time for oopWorkers at once, p50-s and p99-s its latency per upload;
// in-KiB/read is the mean read of the proxy's inbound connections, in-reads
// their reads per upload. With BENCH_CALLGRIND_DIR set (callgrindEnv), the
// proxy runs under callgrind and proxy-instr is its instructions per upload.
func BenchmarkOutOfProcess(b *testing.B) {
	seed, round := envUint(b, "BENCH_SEED"), envUint(b, "BENCH_ROUND")
	up, line := startChild(b, nil, roleEnv+"="+roleUpstream)
	defer up.stop(b)
	upURL, cert, _ := strings.Cut(line, " ")
	for _, c := range oopOrder(seed, round) {
		var cell *oopProxy // started by the cell's first run: none for a cell -test.bench skips
		b.Run(c.String(), func(b *testing.B) {
			if cell == nil {
				cell = startOOPProxy(b, c, upURL, cert)
			}
			cell.measure(b)
		})
		if cell != nil {
			cell.stop(b)
		}
	}
}

// An oopProxy is the proxy process of one cell, and the client to it.
type oopProxy struct {
	c        oopCell
	p        *child
	tr       *http.Transport
	s        sender
	measured time.Duration     // the proxy's CPU time in the measured runs
	cg       *callgrindCounter // the proxy's instructions, when callgrindEnv is set
}

// startOOPProxy starts the proxy of c and warms it up (warmUp).
func startOOPProxy(tb testing.TB, c oopCell, upURL, cert string) *oopProxy {
	env := []string{roleEnv + "=" + roleProxy, kindEnv + "=" + c.kind, upstreamEnv + "=" + upURL, upstreamCertEnv + "=" + cert}
	wrap := strings.Fields(os.Getenv(proxyWrapEnv))
	cgWrap, godebug := callgrindWrap(c)
	if cgWrap != nil {
		if len(wrap) > 0 {
			tb.Fatalf("%s and %s are both set", proxyWrapEnv, callgrindEnv)
		}
		wrap, env = cgWrap, append(env, godebug)
	}
	p, proxyURL := startChild(tb, wrap, env...)
	tr := &http.Transport{MaxIdleConnsPerHost: oopWorkers, DisableCompression: true}
	op := &oopProxy{c: c, p: p, tr: tr, s: sender{url: proxyURL, hc: &http.Client{Transport: tr}}}
	if cgWrap != nil {
		op.cg = newCallgrindCounter(c, p.cmd.Process.Pid)
	}
	if err := op.warmUp(tb); err != nil {
		op.stop(tb)
		tb.Fatalf("%v: warm-up: %v", c, err)
	}
	return op
}

// The warm-up's bounds: it sends up to maxWarmUpBatches batches of
// oopWorkers uploads, and stops after settledBatches batches in a row in
// each of which the proxy took fewer new pages per upload than
// warmFaultShare of the pages a body fills, or than one page for a body of
// fewer pages than 1/warmFaultShare.
const (
	maxWarmUpBatches = 12
	settledBatches   = 2
	warmFaultShare   = 1.0 / 64
)

// warmUp sends batches of oopWorkers uploads until the proxy is in its
// steady state. After the first batch, every client connection and the
// proxy's connection to the upstream exist. Then the proxy's memory must
// stop growing: until its heap and pools hold what the uploads in flight
// need, it takes pages from the system anew, and each costs a page fault
// (about 13 µs on a virtual machine that backs guest memory lazily), which
// measures the warm-up instead of the transport. With bodies of 16 MiB the
// heap keeps growing for seconds, between garbage collections that come
// seconds apart, and a batch with few faults may be followed by one with
// hundreds: so the warm-up waits for settledBatches quiet batches in a row.
func (op *oopProxy) warmUp(tb testing.TB) error {
	quiet := oopWorkers * max(warmFaultShare*float64(op.c.size)/4096, 1)
	settled := 0
	for range maxWarmUpBatches {
		u0 := op.p.usage(tb)
		if st := op.s.run(tb.Context(), oopWorkers, oopWorkers, op.c.size, nil); st.ok != st.ops {
			return fmt.Errorf("%d of %d uploads failed: %v", st.ops-st.ok, st.ops, st.sampleErr)
		}
		settled++
		if d := op.p.usage(tb).since(u0); float64(d.faults) >= quiet {
			settled = 0
		}
		if settled == settledBatches {
			break
		}
	}
	return nil
}

// measure sends b.N uploads, oopWorkers at once, and reports what the
// proxy used for them. With BENCH_PROFILE_DIR set, the proxy writes a CPU
// profile of them to cpu-SIZE-KIND.out there (the last run's).
func (op *oopProxy) measure(b *testing.B) {
	b.SetBytes(int64(op.c.size))
	profile := ""
	if dir := os.Getenv("BENCH_PROFILE_DIR"); dir != "" {
		profile = filepath.Join(dir, fmt.Sprintf("cpu-%s-%s.out", proxytest.SizeName(op.c.size), op.c.kind))
		op.p.command(b, "profile start "+profile)
	}
	if op.cg != nil {
		op.cg.start(b)
	}
	u0 := op.p.usage(b)
	b.ResetTimer()
	st := op.s.run(b.Context(), b.N, oopWorkers, op.c.size, nil)
	b.StopTimer()
	d := op.p.usage(b).since(u0)
	if op.cg != nil {
		b.ReportMetric(float64(op.cg.stop(b))/float64(b.N), "proxy-instr")
	}
	if profile != "" {
		op.p.command(b, "profile stop")
	}
	op.measured += d.cpu
	if st.ok != st.ops {
		b.Errorf("%d of %d uploads failed: %v", st.ops-st.ok, st.ops, st.sampleErr)
	}
	n := float64(b.N)
	b.ReportMetric(d.cpu.Seconds()/n, "proxy-cpu-s")
	b.ReportMetric(float64(d.vcsw)/n, "proxy-vcsw")
	b.ReportMetric(float64(d.faults)/n, "proxy-faults")
	b.ReportMetric(float64(d.allocObjects)/n, "proxy-allocs")
	b.ReportMetric(float64(d.allocBytes)/n, "proxy-B")
	b.ReportMetric(float64(d.gcCycles)/n, "proxy-gc")
	if d.inReads > 0 {
		b.ReportMetric(float64(d.inBytes)/float64(d.inReads)/kib, "in-KiB/read")
		b.ReportMetric(float64(d.inReads)/n, "in-reads")
	}
	reportLatency(b, st)
}

// stop ends the proxy process and checks that the kernel's count of its
// whole life holds what it reported for the measured runs.
func (op *oopProxy) stop(tb testing.TB) {
	tb.Helper()
	op.tr.CloseIdleConnections()
	if life := op.p.stop(tb); op.measured > life {
		tb.Errorf("%v: the proxy reported %v of CPU time measured, but used %v in all", op.c, op.measured, life)
	}
}

// envUint reads a non-negative integer from the environment; unset is 0.
func envUint(tb testing.TB, name string) uint64 {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		tb.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// A child is a process of this binary in one of its roles. The benchmark
// that starts it owns it and stops it.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// proxyWrapEnv, when set, is a command line that the proxy processes run
// under, the binary appended: "valgrind --tool=callgrind" counts their
// instructions, which the machine's other work does not move.
const proxyWrapEnv = "BENCH_PROXY_WRAP"

// startChild starts this test binary, under the command wrap if it is not
// empty, with env added to its environment and returns it with the first
// line it prints.
func startChild(tb testing.TB, wrap []string, env ...string) (*child, string) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe)
	if len(wrap) > 0 {
		cmd = exec.Command(wrap[0], append(wrap[1:], exe)...)
	}
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	line, err := c.line()
	if err != nil {
		c.stop(tb)
		tb.Fatalf("%v: %v", env, err)
	}
	return c, line
}

func (c *child) line() (string, error) {
	if !c.out.Scan() {
		if err := c.out.Err(); err != nil {
			return "", err
		}
		return "", io.ErrUnexpectedEOF
	}
	return c.out.Text(), nil
}

// command sends a proxy process a command (see serveProxy) and returns its
// answer; anything but "ok" fails tb unless the command is usage.
func (c *child) command(tb testing.TB, cmd string) string {
	tb.Helper()
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		tb.Fatal(err)
	}
	line, err := c.line()
	if err != nil {
		tb.Fatal(err)
	}
	if cmd != "usage" && line != "ok" {
		tb.Fatalf("%s: %s", cmd, line)
	}
	return line
}

// usage asks a proxy process for its usage so far.
func (c *child) usage(tb testing.TB) usage {
	tb.Helper()
	u, err := parseUsage(c.command(tb, "usage"))
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// stop ends the process (its standard input ends, and so does it) and
// returns the CPU time, user and system, it used in all.
func (c *child) stop(tb testing.TB) time.Duration {
	tb.Helper()
	c.in.Close()
	if err := c.cmd.Wait(); err != nil {
		tb.Errorf("%v: %v", c.cmd.Env[len(c.cmd.Env)-1], err)
	}
	return c.cmd.ProcessState.UserTime() + c.cmd.ProcessState.SystemTime()
}
