package transport_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
)

// checkRun returns what our Transport's run of s did wrong, judged by the
// upstream's log alone (the plain run is checkDiff's): one line per
// violation, none if it kept every promise.
//   - Each request is applied at most once, with a prefix of the bytes
//     the client sent, all of them if the body had ended.
//   - A 429, or an error for which ShouldRetryLater is true, only for a
//     request the upstream never applied.
//   - A 2xx only with the upstream's own answer to that request: its
//     status, its X-Answer, and its body or a prefix of it.
//   - Drain returns and no byte is held once every request is over.
//
// On Go 1.26 only, an upstream's RST_STREAM PROTOCOL_ERROR after it
// applied a stream is resent by Go itself through GetBody
// (golang/go#77843): each such reset excuses one apply more, and a 429 for
// a request that had one (issue 40: GetBody's error alone after the
// resend, until its fix lands).
func checkRun(s *script, r *runResult) []string {
	var v []string
	fail := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	for i, req := range s.reqs {
		applied := r.log.applied[i]
		excused := 0
		if goResendsProtocolError {
			excused = r.log.protoResets[i]
		}
		if s.h1 && req.idem && req.known && req.size == 0 {
			// net/http's HTTP/1 transport resends a request without a
			// body that has an Idempotency-Key, after its reused
			// connection failed, itself (golang.org/issue/19943); the
			// Transport hands such a request on untouched.
			excused = len(applied)
		}
		if len(applied) > 1+excused {
			fail("request %d applied %d times (attempts %v)", i, len(applied), attemptsOf(applied))
		}
		want := fuzzBody(i, req.size)
		for _, a := range applied {
			if !bytes.HasPrefix(want, a.body) || a.complete && len(a.body) != len(want) {
				fail("request %d applied on attempt %d with %d bytes (complete %v) that are not the %d it sent",
					i, a.attempt+1, len(a.body), a.complete, len(want))
			}
		}
		got := r.got[i]
		if got.status == http.StatusTooManyRequests || got.retryLater {
			if len(applied) > 0 && excused == 0 {
				fail("request %d got a retry-later answer (status %d, error %v) after the upstream applied it", i, got.status, got.err)
			}
		}
		if got.status >= 200 && got.status < 300 {
			if msg := checkAnswer(i, got, r.log); msg != "" {
				fail("request %d: %s", i, msg)
			}
		}
	}
	if !r.plain {
		if r.drained != nil {
			fail("Drain: %v", r.drained)
		}
		if r.held != 0 {
			fail("%d bytes held after Drain", r.held)
		}
	}
	return v
}

// checkAnswer returns what is wrong with got, a 2xx for request i, or ""
// if it is the upstream's own answer.
func checkAnswer(i int, got clientResult, log upstreamLog) string {
	var attempt int
	if _, err := fmt.Sscanf(got.answer, "answer %d/%d", new(int), &attempt); err != nil || !strings.HasPrefix(got.answer, answerText(i, attempt)) {
		return fmt.Sprintf("%d with X-Answer %q, not the upstream's answer to it", got.status, got.answer)
	}
	a, ok := log.answered[answerKey{i, attempt}]
	if !ok || a.status != got.status || got.answer != answerText(i, attempt) {
		return fmt.Sprintf("%d with X-Answer %q; the upstream answered that attempt %v", got.status, got.answer, a)
	}
	want := ""
	if a.data {
		want = answerText(i, attempt)
	}
	if !strings.HasPrefix(want, string(got.body)) || got.bodyErr == nil && !got.proxyPartial() && string(got.body) != want {
		return fmt.Sprintf("%d with body %q (error %v), want %q", got.status, got.body, got.bodyErr, want)
	}
	return ""
}

// proxyPartial reports whether got may hold only part of its body: through
// a ReverseProxy, a failed copy of the upstream's body shows nowhere.
func (got clientResult) proxyPartial() bool { return got.viaProxy }

// delivered reports whether got is a whole answer of the upstream to
// request i: a 2xx with its X-Answer and its whole body, read without error.
func delivered(i int, got clientResult, log upstreamLog) bool {
	if got.status < 200 || got.status >= 300 || got.bodyErr != nil || checkAnswer(i, got, log) != "" {
		return false
	}
	var attempt int
	fmt.Sscanf(got.answer, "answer %d/%d", new(int), &attempt)
	want := ""
	if log.answered[answerKey{i, attempt}].data {
		want = answerText(i, attempt)
	}
	return string(got.body) == want
}

// checkDiff returns the requests that the plain transport delivered and
// ours did not. It is sound only where each request meets the same
// upstream in both runs until the plain one's answer: with one request,
// or with no plan that acts on a whole connection (diffSound). The plain
// transport has no GetBody, so it never sends a request twice and its
// answer came on the first attempt the upstream saw; ours sends the same
// first attempt, whose plan acts on the same bytes, whatever their
// framing.
func checkDiff(s *script, plain, ours *runResult) []string {
	if !diffSound(s) {
		return nil
	}
	var v []string
	for i := range s.reqs {
		if delivered(i, plain.got[i], plain.log) && !delivered(i, ours.got[i], ours.log) {
			g := ours.got[i]
			v = append(v, fmt.Sprintf("request %d: the plain transport delivered %d %q; ours gave status %d, error %v, X-Answer %q, body %q (error %v)",
				i, plain.got[i].status, plain.got[i].answer, g.status, g.err, g.answer, g.body, g.bodyErr))
		}
	}
	return v
}

// diffSound reports whether checkDiff may judge s (see checkDiff). Over
// HTTP/1, a request may land on a connection that another one used, kept
// or closed, so only a script of one request is judged.
func diffSound(s *script) bool { return len(s.reqs) == 1 || !s.h1 && !s.connLevel() }

func attemptsOf(ws []appliedWrite) []int {
	var n []int
	for _, w := range ws {
		n = append(n, w.attempt+1)
	}
	return n
}
