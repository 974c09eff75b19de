package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/cmd/demo/internal/testutil"
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
	var out, errb testutil.SyncBuffer
	code = run(context.Background(), args, &cli{stdout: &out, stderr: &errb})
	return code, out.String(), errb.String()
}

// server is a serving command ("proxy", "upstream") running in-process.
type server struct {
	kubeconfig string
	cancel     context.CancelFunc
	done       chan int // the exit status
	stderr     *testutil.SyncBuffer
}

// startServer runs a serving command until the test ends, and returns once
// it wrote its kubeconfig (-write-kubeconfig is added here), or fails the
// test if the command exits first.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	path := filepath.Join(t.TempDir(), args[0]+".kubeconfig")
	args = append(args, "-write-kubeconfig", path)
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{kubeconfig: path, cancel: cancel, done: make(chan int, 1), stderr: &testutil.SyncBuffer{}}
	ready := make(chan string, 1)
	go func() {
		s.done <- run(ctx, args, &cli{stdout: &testutil.SyncBuffer{}, stderr: s.stderr, ready: func(p string) { ready <- p }})
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
