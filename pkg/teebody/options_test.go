package teebody

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// An Option is opaque: one of another type, which can only embed one of
// this package's, is refused with a package-prefixed panic, not applied by
// half.
func TestForeignOptionPanics(t *testing.T) {
	type wrapped struct{ Option }
	for name, o := range map[string]Option{"embedding": wrapped{WithLimit(1)}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if msg, _ := recover().(string); !strings.HasPrefix(msg, "teebody: ") {
					t.Fatalf("panic %q, want a teebody:-prefixed message", msg)
				}
			}()
			New(io.NopCloser(strings.NewReader("x")), o)
		})
	}
}

// New with every option allocates what New alone does: the Tee, its done
// channel, its reference count and the method value that count calls. The
// options stay on the caller's stack. Calling them through the Option
// interface would move each to the heap, four more allocations per request.
func TestAllocsNewWithOptions(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates")
	}
	limit, hint := rand.Int64N(1<<20)+1<<20, rand.Int64N(1<<20)+1<<10 // not constants, which need no allocation
	budget := NewBudget(1 << 30)
	onDone := func() {}
	got := testing.AllocsPerRun(100, func() {
		New(nil, WithLimit(limit), WithBudget(budget), WithOnDone(onDone), WithSizeHint(hint))
	})
	const want = 4
	if got != want {
		t.Errorf("New with four options: %.1f allocations, want %d", got, want)
	}
}
