package transport_test

import (
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// distinct returns a T (a struct of int64 fields) whose i-th field is i+1,
// and the field names by value.
func distinct[T any]() (T, map[int64]string) {
	var v T
	rv := reflect.ValueOf(&v).Elem()
	names := map[int64]string{}
	for i := range rv.NumField() {
		rv.Field(i).SetInt(int64(i + 1))
		names[int64(i+1)] = rv.Type().Field(i).Name
	}
	return v, names
}

// camel turns a reason's name into its field's: "no_budget" into "NoBudget".
func camel(name string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(name, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// checkReasons checks that the listed reasons have distinct known names and
// that Count maps each onto the field of its name, one to one, so that a
// field added without its reason, or the reverse, fails here. Count is 0
// for each of others, values that are no reason.
func checkReasons[R fmt.Stringer](t *testing.T, list iter.Seq[R], count func(R) int64, fields map[int64]string, others ...R) {
	t.Helper()
	reasons := slices.Collect(list)
	if len(reasons) != len(fields) {
		t.Errorf("%d reasons for %d fields", len(reasons), len(fields))
	}
	seenName, seenField := map[string]bool{}, map[int64]bool{}
	for _, r := range reasons {
		name, n := r.String(), count(r)
		if name == "unknown" || name == "none" || seenName[name] {
			t.Errorf("reason %v: name %q unknown or twice", r, name)
		}
		if fields[n] != camel(name) || seenField[n] {
			t.Errorf("reason %s: Count = %d, the field %q, not %s alone", name, n, fields[n], camel(name))
		}
		seenName[name], seenField[n] = true, true
	}
	for _, r := range others {
		if got := count(r); got != 0 {
			t.Errorf("no reason %#v: Count %d, want 0", r, got)
		}
	}
}

func TestPassThroughReasons(t *testing.T) {
	s, fields := distinct[transport.PassThroughStats]()
	checkReasons(t, transport.PassThroughReasons(), s.Count, fields, -1, 0, 99)
	want := []string{"no_body", "get_body_set", "upgrade", "disabled", "quiet"}
	if got := fmt.Sprint(slices.Collect(transport.PassThroughReasons())); got != fmt.Sprint(want) {
		t.Errorf("names %s, want %s", got, want)
	}
}

// TestPassThroughReasonNames pins the names of the values that are no
// reason: the zero value, a Report's for a buffered body, is none.
func TestPassThroughReasonNames(t *testing.T) {
	for r, want := range map[transport.PassThroughReason]string{0: "none", -1: "unknown", 99: "unknown"} {
		if got := r.String(); got != want {
			t.Errorf("PassThroughReason(%d).String() = %q, want %q", int(r), got, want)
		}
	}
}

// TestReasonListsAllocateNothing ranges over both lists of reasons and
// counts each, as a metrics scrape does: with no allocation, and stopping
// early where the loop breaks.
func TestReasonListsAllocateNothing(t *testing.T) {
	var s transport.Stats
	var sum int64
	allocs := testing.AllocsPerRun(100, func() {
		for r := range transport.PassThroughReasons() {
			sum += s.PassedThrough.Count(r)
		}
		for r := range transport.RefusalReasons() {
			sum += s.ReplaysRefused.Count(r)
		}
	})
	if allocs != 0 {
		t.Errorf("ranging over the reasons: %v allocations, want 0", allocs)
	}
	var first []transport.PassThroughReason
	for r := range transport.PassThroughReasons() {
		first = append(first, r)
		break
	}
	if len(first) != 1 || first[0] != transport.PassThroughNoBody {
		t.Errorf("a loop that breaks at once saw %v, want [no_body]", first)
	}
}

func TestRefusalReasons(t *testing.T) {
	s, fields := distinct[transport.RefusalStats]()
	checkReasons(t, transport.RefusalReasons(), s.Count, fields, -1, 0, 99)
	if got := transport.RefusalReasons(); !slices.Equal(slices.Collect(got), []teebody.Reason{
		teebody.ReasonTooLarge, teebody.ReasonNoBudget, teebody.ReasonStreamedPast, teebody.ReasonClosed, teebody.ReasonYielded}) {
		t.Errorf("RefusalReasons() = %v, not in the order of RefusalStats' fields", slices.Collect(got))
	}
}
