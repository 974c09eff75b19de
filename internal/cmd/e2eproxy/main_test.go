package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseOptions(t *testing.T) {
	ok := []string{"-upstream", "https://127.0.0.1:1", "-ca", "ca.pem", "-addr-file", "addr"}
	if o, err := parseOptions(append(ok, "-mode", "adaptive"), io.Discard); err != nil || o.mode != "adaptive" ||
		len(o.upstreams) != 1 || o.upstreams[0].Host != "127.0.0.1:1" {
		t.Errorf("parseOptions = %+v, %v", o, err)
	}
	two := append([]string{"-upstream", "https://127.0.0.1:2"}, ok...)
	if o, err := parseOptions(two, io.Discard); err != nil || len(o.upstreams) != 2 || o.upstreams[1].Host != "127.0.0.1:1" {
		t.Errorf("parseOptions(%q) = %+v, %v", two, o, err)
	}
	for _, args := range [][]string{
		{"-ca", "ca.pem", "-addr-file", "addr"},
		{"-upstream", "http://127.0.0.1:1", "-ca", "ca.pem", "-addr-file", "addr"},
		{"-upstream", "https://127.0.0.1:1", "-addr-file", "addr"},
		{"-upstream", "https://127.0.0.1:1", "-ca", "ca.pem"},
		append(ok, "-mode", "fixed"),
		append(ok, "-bogus"),
	} {
		if _, err := parseOptions(args, io.Discard); !errors.Is(err, ErrUsage) {
			t.Errorf("parseOptions(%q) = %v, want ErrUsage", args, err)
		}
	}
}

// start runs serve in mode in front of ups until the test ends, and returns
// its base URL. The upstreams share one certificate (proxytest's).
func start(t *testing.T, mode string, ups ...*proxytest.Server) string {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ups[0].Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	o := options{caFile: ca, mode: mode, listen: "127.0.0.1:0"}
	for _, up := range ups {
		u, err := url.Parse(up.URL)
		if err != nil {
			t.Fatal(err)
		}
		o.upstreams = append(o.upstreams, u)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs, done := make(chan net.Addr, 1), make(chan error, 1)
	go func() {
		done <- serve(ctx, o, log.New(io.Discard, "", 0), func(a net.Addr) error { addrs <- a; return nil })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case a := <-addrs:
		return "http://" + a.String()
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return ""
}

// TestTeebodyModeSurvivesGOAWAY: in teebody mode, POSTs without GetBody to an
// HTTP/2 upstream that sends GOAWAY after every third response all arrive
// intact, and /_e2e/stats reports the Transport's Stats.
func TestTeebodyModeSurvivesGOAWAY(t *testing.T) {
	var intact atomic.Int64
	up := proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.New()
		if _, err := io.Copy(sum, r.Body); err == nil && hex.EncodeToString(sum.Sum(nil)) == r.Header.Get("X-Body-Sha256") {
			intact.Add(1)
		}
		w.WriteHeader(http.StatusOK) // a response proxytest counts, and ends the connection after every third
	}), proxytest.Options{Every: 3})
	defer up.Close()
	base := start(t, "teebody", up)
	client := &http.Transport{}
	defer client.CloseIdleConnections()

	const n = 60
	for i := range n {
		body := []byte(strings.Repeat(strconv.Itoa(i), 100))
		sum := sha256.Sum256(body)
		req, err := http.NewRequest(http.MethodPost, base+"/upload", io.NopCloser(bytes.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Body-Sha256", hex.EncodeToString(sum[:]))
		resp, err := client.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %s", i, resp.Status)
		}
	}
	if got := intact.Load(); got != n {
		t.Errorf("%d of %d bodies arrived intact", got, n)
	}
	resp, err := http.Get(base + "/_e2e/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st transport.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Requests != n || st.Buffered != n || up.Goaways() == 0 {
		t.Errorf("stats %+v after %d GOAWAYs; want %d requests, all buffered, and some GOAWAY", st, up.Goaways(), n)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestPlainModeForwards: plain mode forwards over HTTP/2 and has no Stats.
func TestPlainModeForwards(t *testing.T) {
	up := proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}), proxytest.Options{})
	defer up.Close()
	base := start(t, "plain", up)
	defer http.DefaultClient.CloseIdleConnections()
	for path, want := range map[string]string{"/x": "HTTP/2.0", "/_e2e/stats": "{}\n"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != want {
			t.Errorf("GET %s = %q, %v; want %q", path, b, err, want)
		}
	}
}

// TestPlainModeTakesUpstreamsInTurn: given several upstreams, e2eproxy
// sends each request to the next one, over HTTP/2.
func TestPlainModeTakesUpstreamsInTurn(t *testing.T) {
	var ups []*proxytest.Server
	for i := range 3 {
		up := proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strconv.Itoa(i)+" "+r.Proto)
		}), proxytest.Options{})
		defer up.Close()
		ups = append(ups, up)
	}
	base := start(t, "plain", ups...)
	defer http.DefaultClient.CloseIdleConnections()
	var got []string
	for range 6 {
		resp, err := http.Get(base + "/x")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if want := "0 HTTP/2.0,1 HTTP/2.0,2 HTTP/2.0,0 HTTP/2.0,1 HTTP/2.0,2 HTTP/2.0"; strings.Join(got, ",") != want {
		t.Errorf("answers %q, want %q", got, want)
	}
}
