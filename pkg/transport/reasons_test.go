package transport_test

import (
	"fmt"
	"reflect"
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
// field added without its reason, or the reverse, fails here.
func checkReasons[R fmt.Stringer](t *testing.T, reasons []R, count func(R) int64, fields map[int64]string, unknown R) {
	t.Helper()
	if len(reasons) != len(fields) {
		t.Errorf("%d reasons for %d fields", len(reasons), len(fields))
	}
	seenName, seenField := map[string]bool{}, map[int64]bool{}
	for _, r := range reasons {
		name, n := r.String(), count(r)
		if name == "unknown" || seenName[name] {
			t.Errorf("reason %v: name %q unknown or twice", r, name)
		}
		if fields[n] != camel(name) || seenField[n] {
			t.Errorf("reason %s: Count = %d, the field %q, not %s alone", name, n, fields[n], camel(name))
		}
		seenName[name], seenField[n] = true, true
	}
	if got := count(unknown); got != 0 || unknown.String() != "unknown" {
		t.Errorf("an unknown reason: Count %d, name %q; want 0, unknown", got, unknown.String())
	}
}

func TestPassThroughReasons(t *testing.T) {
	s, fields := distinct[transport.PassThroughStats]()
	checkReasons(t, transport.PassThroughReasons(), s.Count, fields, transport.PassThroughReason(0))
	want := []string{"no_body", "get_body_set", "upgrade", "disabled", "quiet"}
	if got := fmt.Sprint(transport.PassThroughReasons()); got != fmt.Sprint(want) {
		t.Errorf("names %s, want %s", got, want)
	}
}

func TestRefusalReasons(t *testing.T) {
	s, fields := distinct[transport.RefusalStats]()
	checkReasons(t, transport.RefusalReasons(), s.Count, fields, teebody.Reason(0))
}
