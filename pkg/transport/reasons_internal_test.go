package transport

import (
	"errors"
	"fmt"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
)

// TestEveryReasonCounted counts one refusal of each teebody.Reason (every
// value whose String is not "unknown") and checks that it lands in its own
// field of RefusalStats and nowhere else, so that a reason added to teebody
// without its entry in refusals fails here instead of counting as another.
// An error that does not match teebody.ErrNotReplayable is not counted.
func TestEveryReasonCounted(t *testing.T) {
	var all []teebody.Reason
	for r := teebody.Reason(1); r.String() != "unknown"; r++ {
		all = append(all, r)
		tr := New(nil, DefaultConfig())
		tr.countRefusal(fmt.Errorf("http2: %w", RefusedReplay(t, r)))
		got := tr.Stats().ReplaysRefused
		var sum int64
		for _, field := range refusals {
			if field != nil {
				sum += *field(&got)
			}
		}
		if got.Count(r) != 1 || sum != 1 {
			t.Errorf("reason %v: Count %d, %d refusals counted in all (%+v); want 1 and 1", r, got.Count(r), sum, got)
		}
	}
	if fmt.Sprint(RefusalReasons()) != fmt.Sprint(all) {
		t.Errorf("RefusalReasons() = %v, want every reason: %v", RefusalReasons(), all)
	}
	tr := New(nil, DefaultConfig())
	tr.countRefusal(errors.New("not a refusal"))
	if got := tr.Stats().ReplaysRefused; got != (RefusalStats{}) {
		t.Errorf("an error that is not a refusal was counted: %+v", got)
	}
}
