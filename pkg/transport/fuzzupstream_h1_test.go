package transport_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// h1Upstream is an HTTP/1.1 upstream on in-memory connections (memnet_test.go)
// that does with each request what its script plans for that attempt, the
// HTTP/2 actions taken as the nearest HTTP/1 has:
//   - actAnswer: the answer, on a connection kept alive;
//   - actGoAway: the answer with Connection: close, then the close (after
//     the response);
//   - actReset: the status line, headers and half the body announced, then
//     the close (during the response);
//   - actClose: the close, nothing written (before the response);
//   - actStall: nothing until the client gives up.
//
// HTTP/1 has no refusal, so it is honest by construction.
type h1Upstream struct {
	s    *script
	stop chan struct{} // closed when the upstream closes: a stall ends

	mu       sync.Mutex
	attempts []int // guarded by mu: requests seen, per request of s
	log      upstreamLog
}

func newH1Upstream(s *script) *h1Upstream {
	n := len(s.reqs)
	return &h1Upstream{s: s, stop: make(chan struct{}), attempts: make([]int, n), log: upstreamLog{
		applied: make([][]appliedWrite, n), answered: map[answerKey]answer{}, protoResets: make([]int, n)}}
}

func (u *h1Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := strconv.Atoi(r.Header.Get(hdrFuzzReq))
	if err != nil || req < 0 || req >= len(u.s.reqs) {
		http.Error(w, "no request of the script", http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	attempt := u.attempts[req]
	u.attempts[req]++
	u.mu.Unlock()
	p := u.s.plan(req, attempt)
	var got []byte
	complete := false
	switch p.at {
	case atSome:
		got = make([]byte, p.some)
		n, err := io.ReadFull(r.Body, got)
		got = got[:n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			complete = true // the body ended before the point
		} else if err != nil {
			return // the client went away: nothing applied
		}
	case atEnd:
		var err error
		if got, err = io.ReadAll(r.Body); err != nil {
			return // the client went away: nothing applied
		}
		complete = true
	}
	if p.apply {
		u.mu.Lock()
		u.log.applied[req] = append(u.log.applied[req], appliedWrite{attempt: attempt, body: bytes.Clone(got), complete: complete})
		u.mu.Unlock()
	}
	text := answerText(req, attempt)
	switch p.act {
	case actAnswer, actGoAway:
		u.answered(req, attempt, p.status, p.data)
		if p.act == actGoAway {
			w.Header().Set("Connection", "close")
		}
		w.Header().Set("X-Answer", text)
		w.WriteHeader(p.status)
		if p.data {
			io.WriteString(w, text)
		}
	case actReset:
		u.answered(req, attempt, p.status, true) // the first half of a body
		w.Header().Set("X-Answer", text)
		w.Header().Set("Content-Length", strconv.Itoa(2*len(text)))
		w.WriteHeader(p.status)
		io.WriteString(w, text)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	case actClose:
		panic(http.ErrAbortHandler)
	case actStall:
		// The request's context ends with its connection only once its
		// body was read to the end.
		select {
		case <-r.Context().Done():
		case <-u.stop:
		}
	}
}

func (u *h1Upstream) answered(req, attempt, status int, data bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.log.answered[answerKey{req, attempt}] = answer{status: status, data: data}
}
