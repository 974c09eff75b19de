package teebody

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// The zero Option changes nothing: a Tee made with it keeps the default
// limit and replays the whole body.
func TestZeroOptionChangesNothing(t *testing.T) {
	tee := New(io.NopCloser(strings.NewReader("body")), Option{})
	defer tee.Close()
	if tee.limit != defaultLimit {
		t.Errorf("limit = %d, want the default %d", tee.limit, defaultLimit)
	}
	r, err := tee.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if string(got) != "body" || err != nil {
		t.Errorf("read %q, %v; want \"body\", nil", got, err)
	}
}

// New with every option allocates what New alone does: the Tee, of which
// its reference count is a part. The options stay on the caller's stack.
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
	const want = 1
	if got != want {
		t.Errorf("New with four options: %.1f allocations, want %d", got, want)
	}
}
