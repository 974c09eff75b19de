package load

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// progress prints a run's progress from a goroutine of its own, until stop.
type progress struct {
	w            io.Writer // owned by the goroutine until it exits
	terminal     bool
	name         string
	total        int
	done, failed *atomic.Int64
	start        time.Time
	quit         chan struct{} // closed by stop
	exited       chan struct{} // closed when the goroutine returned
}

func startProgress(w io.Writer, terminal bool, name string, total int, done, failed *atomic.Int64) *progress {
	p := &progress{w: w, terminal: terminal, name: name, total: total, done: done, failed: failed,
		start: time.Now(), quit: make(chan struct{}), exited: make(chan struct{})}
	go p.run()
	return p
}

// stop prints the final line and returns once the goroutine exited.
func (p *progress) stop() {
	close(p.quit)
	<-p.exited
}

func (p *progress) run() {
	defer close(p.exited)
	period := time.Second
	if p.terminal {
		period = 200 * time.Millisecond
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	lastStep := 0
	for {
		select {
		case <-p.quit:
			if p.terminal {
				fmt.Fprintf(p.w, "\r%s\n", p.line())
			} else {
				fmt.Fprintln(p.w, p.line())
			}
			return
		case <-tick.C:
			if p.terminal {
				// \033[K clears what a longer line before left behind.
				fmt.Fprintf(p.w, "\r%s\033[K", p.line())
				continue
			}
			// Plain output (a log, a pipe): a line each time another 10% is done.
			if step := int(p.done.Load()) * 10 / max(p.total, 1); step > lastStep && step < 10 {
				lastStep = step
				fmt.Fprintln(p.w, p.line())
			}
		}
	}
}

func (p *progress) line() string {
	done := int(p.done.Load())
	return fmt.Sprintf("%s: %d/%d operations (%.0f%%), %d failed, %.1fs",
		p.name, done, p.total, Percent(done, p.total), p.failed.Load(), time.Since(p.start).Seconds())
}
