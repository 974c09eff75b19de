package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/teebody/teebody/internal/proxytest"
)

// process is the command running as a process of its own (the test binary
// re-run as main, see TestMain).
type process struct {
	cmd    *exec.Cmd
	stderr *proxytest.SyncBuffer // everything after the ready line
}

// startProcess runs the command with args and returns once it logged
// wantLine on stderr.
func startProcess(t *testing.T, wantLine string, args ...string) *process {
	t.Helper()
	// A bound for a process that never gets ready or never stops.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), envMain+"=1")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: &proxytest.SyncBuffer{}}
	r := bufio.NewReader(pipe)
	for {
		line, err := r.ReadString('\n')
		if strings.Contains(line, wantLine) {
			break
		}
		if err != nil {
			_ = cmd.Wait()
			t.Fatalf("%v ended before %q: %v", args, wantLine, err)
		}
	}
	done := make(chan struct{})
	go func() { // drains stderr until the process exits
		defer close(done)
		_, _ = io.Copy(p.stderr, r)
	}()
	t.Cleanup(func() { <-done })
	return p
}

// stop sends sig and returns the exit status.
func (p *process) stop(t *testing.T, sig os.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := p.cmd.Wait()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestSignals runs "demo upstream" and "demo proxy" as processes, sends
// load through them, and stops them with SIGTERM and SIGINT: each writes
// its kubeconfig only once listening, and shuts down cleanly, exit 0.
func TestSignals(t *testing.T) {
	dir := t.TempDir()
	upPath := filepath.Join(dir, "up")
	proxyPath := filepath.Join(dir, "proxy")
	up := startProcess(t, "upstream listening", "upstream", "-goaway-chance", "0", "-goaway-after", "20", "-write-kubeconfig", upPath)
	if _, err := os.Stat(upPath); err != nil {
		t.Fatal(err)
	}
	px := startProcess(t, "proxy listening", "proxy", "-kubeconfig", upPath, "-write-kubeconfig", proxyPath)
	code, stdout, stderr := runCmd(t, "load", "-kubeconfig", proxyPath, "-workers", "4", "-ops", "10", "-qps", "-1", "-no-retry", "-quiet")
	if code != exitOK {
		t.Fatalf("load: exit %d: %s%s", code, stdout, stderr)
	}
	if code := px.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("proxy exit %d: %s", code, px.stderr.String())
	}
	contains(t, "proxy log", px.stderr.String(), "proxy shutting down", "proxy stopped", "replays_served=")
	if code := up.stop(t, os.Interrupt); code != 0 {
		t.Fatalf("upstream exit %d: %s", code, up.stderr.String())
	}
	contains(t, "upstream log", up.stderr.String(), "upstream stopped")
}
