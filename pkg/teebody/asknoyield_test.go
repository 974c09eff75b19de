package teebody

import (
	"testing"
	"testing/synctest"
)

// A body that asks no yield (AskNoYield, the yield=off arm of
// BenchmarkYieldPolicy) loses its replay where, asking, it would have made a
// yield (TestYieldOfExactlyWhatIsNeeded): nobody yields, and the body that
// could have keeps its replay.
func TestAskNoYield(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := NewBudget(8 << 10)
		holder := readAheadOf(t, budget, 8<<10, 4<<10)
		defer closeAndWait(t, holder)
		if budget.InUse() != budget.Total() {
			t.Fatalf("setup: budget in use %d of %d", budget.InUse(), budget.Total())
		}
		asker, askerSrc, askerBody := stalled(t, budget, 0)
		defer closeAndWait(t, asker)
		asker.AskNoYield()
		askerSrc.feed(bodyPrefix(1))
		readN(t, askerBody, 0, 1)
		wantReason(t, asker.ReplayErr(), ReasonNoBudget)
		if err := holder.ReplayErr(); err != nil {
			t.Errorf("the holder lost its replay: %v", err)
		}
		if got := budget.Yields(); got != 0 {
			t.Errorf("yields = %d, want 0", got)
		}
	})
}
