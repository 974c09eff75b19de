//go:build unix

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopGrace is how long a process may take to exit after SIGTERM before its group is killed.
const stopGrace = 15 * time.Second

// proc is a process the suite started, in a process group of its own, with its output in a log file.
//
// The goroutine started by startProc owns cmd.Wait; done is closed once the process has exited and been reaped,
// and waitErr is written before that (so it may be read once done is closed).
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	grace   time.Duration // how long stop waits after SIGTERM; set before stop is first called
	done    chan struct{}
	waitErr error
}

// startProc starts bin with args in a new process group (see startCmd).
func startProc(t testing.TB, dir, name, bin string, args ...string) *proc {
	t.Helper()
	return startCmd(t, dir, name, exec.Command(bin, args...))
}

// startCmd starts cmd in a new process group, its stdout and stderr in dir/name.log, and registers a cleanup that
// stops the group (stop). On Linux the child also gets SIGKILL if the test binary dies before its cleanups run (a
// panic, or go test's -timeout), so nothing outlives the run.
func startCmd(t testing.TB, dir, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close() // the child holds its own descriptor

	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, grace: stopGrace, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	t.Logf("started %s (pid %d): %s", name, cmd.Process.Pid, strings.Join(append([]string{filepath.Base(cmd.Path)}, cmd.Args[1:]...), " "))
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", logPath, tail(logPath, 40))
		}
	})
	return p
}

// exited reports whether the process has exited.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, waits up to p.grace, then sends SIGKILL to the group and waits for
// the process to be reaped. It is idempotent. The group is signalled only while its leader has not been reaped,
// so its id cannot have been reused by then.
func (p *proc) stop(t testing.TB) {
	if p.exited() {
		return
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Errorf("SIGTERM %s: %v", p.name, err)
	}
	timer := time.NewTimer(p.grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return
	case <-timer.C:
	}
	t.Logf("%s (pid %d) ignored SIGTERM for %v; killing its group", p.name, pgid, p.grace)
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Errorf("SIGKILL %s: %v", p.name, err)
	}
	<-p.done
}

// waitFor calls check until it returns true or an error, the process exits, or ctx ends. Polling is the only way
// to see a server come up from outside; the interval is short and every wait has a deadline.
func (p *proc) waitFor(ctx context.Context, what string, check func(context.Context) (bool, error)) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := check(ctx)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", p.name, what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v) before %s; log %s:\n%s", p.name, p.waitErr, what, p.logPath, tail(p.logPath, 30))
		case <-ctx.Done():
			return fmt.Errorf("%s: no %s: %w; log %s:\n%s", p.name, what, ctx.Err(), p.logPath, tail(p.logPath, 30))
		case <-tick.C:
		}
	}
}

// waitReady waits (as waitFor does) until GET base+"/_ready" answers 204 in cleartext: the upstream's answer
// through the proxy that p runs. Until then the proxy may not listen, or answer otherwise (a 404 before its routes
// are in).
func (p *proc) waitReady(ctx context.Context, what, base string) error {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	return p.waitFor(ctx, what, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_ready", nil)
		if err != nil {
			return false, err
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return false, nil // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusNoContent, nil
	})
}

// tail returns the last n lines of the file at path, or a note saying why it could not be read.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// waitForFile waits (as waitFor does) until the file at path exists and holds want, which a process writes only once
// it is serving, and returns its content.
func (p *proc) waitForFile(ctx context.Context, path, want string) ([]byte, error) {
	var b []byte
	err := p.waitFor(ctx, "file "+path, func(context.Context) (bool, error) {
		var err error
		b, err = os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return err == nil && strings.Contains(string(b), want), err
	})
	return b, err
}
