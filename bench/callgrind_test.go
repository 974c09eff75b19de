package bench

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

// callgrindEnv, when set to a directory, runs BenchmarkOutOfProcess's proxy
// processes under valgrind's callgrind, which writes its counts there. The
// proxy then reports proxy-instr: the instructions it ran per measured
// upload, every thread's, user space only. The count does not depend on the
// machine's other work, so two runs of a cell differ by the scheduling of
// the uploads alone (about 1% at 1 KiB), where the CPU time of a round
// moves by 10% and more on a shared machine. Under callgrind the proxy runs
// about fifty times slower: a cell takes a count of uploads
// (-test.benchtime 1000x), not a time.
const callgrindEnv = "BENCH_CALLGRIND_DIR"

// callgrindWrap returns the command line that runs a proxy process of c
// under callgrind, and the GODEBUG it needs, or nothing when callgrindEnv is
// unset.
//
// Go's runtime reads the time stamp counter with RDTSCP, which valgrind 3.19
// does not know (the process would die of SIGILL): cpu.rdtscp=off makes it
// use RDTSC. Asynchronous preemption is off so that valgrind never delivers
// a signal in the middle of the code it instruments; both arms run so.
func callgrindWrap(c oopCell) (wrap []string, godebug string) {
	dir := os.Getenv(callgrindEnv)
	if dir == "" {
		return nil, ""
	}
	godebug = "GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1"
	if g := os.Getenv("GODEBUG"); g != "" {
		godebug += "," + g
	}
	return []string{"valgrind", "--quiet", "--tool=callgrind", "--callgrind-out-file=" + callgrindOut(c)}, godebug
}

// A callgrindCounter counts the instructions of one proxy process between
// start and stop, with callgrind_control: start zeroes the counts, stop
// dumps them to a file of their own, numbered from 1, whose total it reads.
type callgrindCounter struct {
	pid   int
	out   string // the process's --callgrind-out-file, %p expanded
	dumps int    // dumps so far
}

// callgrindOut is the --callgrind-out-file of c's proxy processes, in
// callgrindEnv's directory; callgrind puts the process's ID for %p.
func callgrindOut(c oopCell) string {
	return filepath.Join(os.Getenv(callgrindEnv), fmt.Sprintf("callgrind-%s-%s.%%p.out", proxytest.SizeName(c.size), c.kind))
}

func newCallgrindCounter(c oopCell, pid int) *callgrindCounter {
	return &callgrindCounter{pid: pid, out: strings.Replace(callgrindOut(c), "%p", strconv.Itoa(pid), 1)}
}

func (cc *callgrindCounter) start(tb testing.TB) {
	tb.Helper()
	cc.control(tb, "--zero")
}

// stop returns the instructions the process ran since start.
func (cc *callgrindCounter) stop(tb testing.TB) int64 {
	tb.Helper()
	cc.control(tb, "--dump")
	cc.dumps++
	n, err := callgrindTotal(fmt.Sprintf("%s.%d", cc.out, cc.dumps))
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func (cc *callgrindCounter) control(tb testing.TB, flag string) {
	tb.Helper()
	if out, err := exec.Command("callgrind_control", flag, strconv.Itoa(cc.pid)).CombinedOutput(); err != nil {
		tb.Fatalf("callgrind_control %s %d: %v\n%s", flag, cc.pid, err, out)
	}
}

// callgrindTotal returns the instructions a callgrind dump counts: the
// value of its "summary:" line (its first event, Ir, the only one callgrind
// counts by default).
func callgrindTotal(name string) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "summary:"); ok {
			fields := strings.Fields(v)
			if len(fields) == 0 {
				break
			}
			n, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("%s: summary %q", name, v)
			}
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no summary line", name)
}

func TestCallgrindTotal(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		name := filepath.Join(dir, "out")
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	n, err := callgrindTotal(write("# callgrind format\nversion: 1\nevents: Ir\nsummary: 8097844\n\nfn=main\n0 12\ntotals: 8097844\n"))
	if err != nil || n != 8097844 {
		t.Errorf("callgrindTotal = %d, %v; want 8097844", n, err)
	}
	for _, bad := range []string{"events: Ir\n", "summary:\n", "summary: -3\n", "summary: many\n"} {
		if n, err := callgrindTotal(write(bad)); err == nil {
			t.Errorf("callgrindTotal of %q = %d; want an error", bad, n)
		}
	}
	if _, err := callgrindTotal(filepath.Join(dir, "missing")); err == nil {
		t.Error("callgrindTotal of a missing file: no error")
	}
}

// TestCallgrindCounter runs a proxy process under callgrind, where valgrind
// is installed: the instructions it counts while uploads pass exceed those
// of a window in which none does.
func TestCallgrindCounter(t *testing.T) {
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	if raceEnabled {
		t.Skip("the race detector's memory layout does not run under valgrind")
	}
	if testing.Short() {
		t.Skip("a proxy under callgrind takes seconds")
	}
	t.Setenv(proxyWrapEnv, "")
	t.Setenv(callgrindEnv, t.TempDir())
	up, line := startChild(t, nil, roleEnv+"="+roleUpstream)
	defer up.stop(t)
	upURL, cert, _ := strings.Cut(line, " ")
	op := startOOPProxy(t, oopCell{size: 1 * kib, kind: kindFloor}, upURL, cert)
	defer op.stop(t)

	op.cg.start(t)
	idle := op.cg.stop(t)
	op.cg.start(t)
	if st := op.s.run(t.Context(), 64, oopWorkers, 1*kib, nil); st.ok != st.ops {
		t.Fatalf("%d of %d uploads failed: %v", st.ops-st.ok, st.ops, st.sampleErr)
	}
	busy := op.cg.stop(t)
	// 64 uploads of 1 KiB take some 17 million instructions.
	if busy < 1_000_000 || busy < 10*idle {
		t.Errorf("%d instructions with 64 uploads, %d with none; want millions, and ten times as many", busy, idle)
	}
}
