package transport

import "context"

// hooksKey is the context key of a request's hooks: the BodyTraces of
// WithBodyTrace and the Reports of WithReport, in one list, so that
// RoundTrip finds both with one Context.Value.
type hooksKey struct{}

// hooks is one entry of what WithBodyTrace and WithReport put in a
// context: a trace or a report, and the entries of the contexts it derives
// from.
type hooks struct {
	trace  *BodyTrace // nil in a Report's entry
	report *Report    // nil in a BodyTrace's entry
	outer  *hooks     // nil for the first
}

// hooksOf returns the hooks of ctx, the newest first, or nil.
func hooksOf(ctx context.Context) *hooks {
	h, _ := ctx.Value(hooksKey{}).(*hooks)
	return h
}

// withHook returns a context based on ctx whose hooks are h's trace or
// report, then those of ctx.
func withHook(ctx context.Context, h hooks) context.Context {
	h.outer = hooksOf(ctx)
	return context.WithValue(ctx, hooksKey{}, &h)
}

// eachTrace calls f with every trace of h, the newest first. A nil h has
// none.
func (h *hooks) eachTrace(f func(*BodyTrace)) {
	for ; h != nil; h = h.outer {
		if h.trace != nil {
			f(h.trace)
		}
	}
}

// hasTrace reports whether h holds a trace.
func (h *hooks) hasTrace() bool {
	for ; h != nil; h = h.outer {
		if h.trace != nil {
			return true
		}
	}
	return false
}

// hasReport reports whether h holds a Report.
func (h *hooks) hasReport() bool {
	for ; h != nil; h = h.outer {
		if h.report != nil {
			return true
		}
	}
	return false
}
