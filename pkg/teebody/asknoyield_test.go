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
		budget, holder, asker := askBehindHolder(t, true)
		wantReason(t, asker.ReplayErr(), ReasonNoBudget)
		if err := holder.ReplayErr(); err != nil {
			t.Errorf("the holder lost its replay: %v", err)
		}
		if got := budget.Yields(); got != 0 {
			t.Errorf("yields = %d, want 0", got)
		}
	})
}
