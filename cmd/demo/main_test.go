package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
	"github.com/teebody/teebody/internal/proxytest"
)

// envMain makes the test binary run main instead of the tests, so that a
// test can run the command as a process of its own (signals, exit status).
const envMain = "TEEBODY_DEMO_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envMain) == "1" {
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

// runCmd runs the command in-process to its end.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLI(t, &cli{upstream: fakeapi.Start}, args...)
}

// runCLI runs the command in-process to its end with c's hooks.
func runCLI(t *testing.T, c *cli, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb proxytest.SyncBuffer
	c.stdout, c.stderr = &out, &errb
	code = run(context.Background(), args, c)
	return code, out.String(), errb.String()
}

// refusingUpstream is a cli.upstream that serves the embedded API (without
// GOAWAYs of its own) on a proxytest.Server, which ends a connection with a
// GOAWAY after every 10th response and refuses every stream of one
// connection in three (the first among them) with a GOAWAY once its body
// started: some writes meet a GOAWAY on every run, none drawn at random.
func refusingUpstream(fakeapi.Options, *slog.Logger) (serve.Running, error) {
	s := proxytest.NewServer(fakeapi.New(fakeapi.Options{}), proxytest.Options{Every: 10, RefuseEvery: 3})
	return &refusing{Server: s, done: make(chan struct{})}, nil
}

type refusing struct {
	*proxytest.Server
	done chan struct{}
	once sync.Once
}

func (r *refusing) Spec() kubeconfig.Spec {
	return kubeconfig.Spec{Name: "teebody-upstream", Server: r.URL,
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate().Raw})}
}

func (r *refusing) Done() <-chan struct{} { return r.done }

func (r *refusing) Shutdown(context.Context) error {
	r.once.Do(func() { r.Close(); close(r.done) })
	return nil
}

// server is a serving command ("proxy", "upstream") running in-process.
type server struct {
	kubeconfig string
	cancel     context.CancelFunc
	done       chan int // the exit status
	stderr     *proxytest.SyncBuffer
}

// startServer runs a serving command until the test ends, and returns once
// it wrote its kubeconfig (-write-kubeconfig is added here), or fails the
// test if the command exits first.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	return startServerCLI(t, &cli{upstream: fakeapi.Start}, args...)
}

// startServerCLI is startServer with c's hooks.
func startServerCLI(t *testing.T, c *cli, args ...string) *server {
	t.Helper()
	path := filepath.Join(t.TempDir(), args[0]+".kubeconfig")
	args = append(args, "-write-kubeconfig", path)
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{kubeconfig: path, cancel: cancel, done: make(chan int, 1), stderr: &proxytest.SyncBuffer{}}
	ready := make(chan string, 1)
	go func() {
		c.stdout, c.stderr, c.ready = &proxytest.SyncBuffer{}, s.stderr, func(p string) { ready <- p }
		s.done <- run(ctx, args, c)
	}()
	t.Cleanup(func() {
		if code := s.stop(); code != exitOK {
			t.Errorf("%s exited %d: %s", args[0], code, s.stderr.String())
		}
	})
	select {
	case <-ready:
		return s
	case code := <-s.done:
		s.done <- code
		t.Fatalf("%s exited %d before it was ready: %s", args[0], code, s.stderr.String())
		return nil
	}
}

// stop cancels the command (as SIGTERM does) and returns its exit status.
func (s *server) stop() int {
	s.cancel()
	code := <-s.done
	s.done <- code
	return code
}

// readJSON decodes a result file into a map, to see its field names.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func contains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}
