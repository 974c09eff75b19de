//go:build unix

package e2e

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// groupHolds starts `sh -c script` through startCmd with the write end of a pipe as its fd 3, which every process
// of the group inherits, and returns the read end: it reads EOF only once every one of them has exited. The script
// writes one byte to fd 3 once it is set up; groupHolds returns after reading it.
func groupHolds(t *testing.T, script string) (*proc, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	cmd := exec.Command("sh", "-c", script)
	cmd.ExtraFiles = []*os.File{w}
	p := startCmd(t, t.TempDir(), "sh", cmd)
	w.Close()
	if _, err := io.ReadFull(r, make([]byte, 1)); err != nil {
		t.Fatalf("the script did not say it was set up: %v", err)
	}
	return p, r
}

// wantGroupGone fails unless every process that held the pipe has exited.
func wantGroupGone(t *testing.T, r *os.File) {
	t.Helper()
	// The deadline only bounds a failing test; a passing one reads EOF as soon as the last holder exits.
	if err := r.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	n, err := r.Read(make([]byte, 1))
	if n != 0 || err != io.EOF {
		t.Fatalf("read from the group's pipe: %d bytes, %v; want EOF: a process of the group outlived stop", n, err)
	}
}

func signalOf(t *testing.T, err error) syscall.Signal {
	t.Helper()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("wait: %v, want an exit by signal", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		t.Fatalf("wait: %v, want an exit by signal", err)
	}
	return ws.Signal()
}

func TestStopTerminatesTheWholeGroup(t *testing.T) {
	// The shell waits on a child of its own; both must go, as kube-apiserver's or the demo's helpers would.
	p, r := groupHolds(t, "sleep 300 & printf x >&3; wait")
	p.stop(t)
	wantGroupGone(t, r)
	if sig := signalOf(t, p.waitErr); sig != syscall.SIGTERM {
		t.Fatalf("the group leader died of %v, want SIGTERM", sig)
	}
	p.stop(t) // idempotent
}

func TestStopKillsAGroupThatIgnoresSIGTERM(t *testing.T) {
	p, r := groupHolds(t, `trap "" TERM; sleep 300 & printf x >&3; wait`)
	p.grace = 10 * time.Millisecond
	p.stop(t)
	wantGroupGone(t, r)
	if sig := signalOf(t, p.waitErr); sig != syscall.SIGKILL {
		t.Fatalf("the group leader died of %v, want SIGKILL", sig)
	}
}

func TestStopAfterExit(t *testing.T) {
	p, r := groupHolds(t, "printf x >&3; exit 3")
	<-p.done
	p.stop(t)
	wantGroupGone(t, r)
	if code := exitCode(p.waitErr); code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP teebody_replays_served_total Replays served.
# TYPE teebody_replays_served_total counter
teebody_replays_served_total 7
teebody_replays_refused_total{reason="no budget"} 2
teebody_replays_refused_total{reason="too_large"} 3
teebody_held_bytes 0 1700000000000
`
	m := parseMetrics(t, strings.NewReader(text))
	if m["teebody_replays_served_total"] != 7 || m[`teebody_replays_refused_total{reason="no budget"}`] != 2 {
		t.Fatalf("parsed %v", m)
	}
	if v, ok := sumMetric(m, "teebody_replays_refused_total"); !ok || v != 5 {
		t.Fatalf("sum of teebody_replays_refused_total = %v, %v; want 5, true", v, ok)
	}
	if _, ok := sumMetric(m, "teebody_replays"); ok {
		t.Fatal("sumMetric matched a prefix of a name")
	}
}

func TestKubeconfigFields(t *testing.T) {
	c := &cluster{url: "https://127.0.0.1:6443", token: "abc", caPEM: []byte("pem")}
	b := c.kubeconfigYAML()
	if m := serverKey.FindSubmatch(b); m == nil || string(m[1]) != c.url {
		t.Fatalf("server: %q in\n%s", m, b)
	}
	if m := tokenKey.FindSubmatch(b); m == nil || string(m[1]) != "abc" {
		t.Fatalf("token: %q in\n%s", m, b)
	}
	if m := caKey.FindSubmatch(b); m == nil || string(m[1]) != "cGVt" {
		t.Fatalf("certificate-authority-data: %q in\n%s", m, b)
	}
}
