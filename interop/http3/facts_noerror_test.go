package http3_test

// A fact of quic-go v0.65.0's HTTP/3 client, read in its source
// ($GOMODCACHE/github.com/quic-go/quic-go@v0.65.0) and pinned here against
// its real client and server on 127.0.0.1: after a GOAWAY, the client
// closes its own connection with H3_NO_ERROR, and a request whose stream it
// had opened but not yet counted fails with
// "http3: parsing frame failed: H3_NO_ERROR (local)". quic-go does not
// send it again. teebody may not either: that error does not prove that the
// upstream did not process the request.
//
// Only two places of the client close a connection with H3_NO_ERROR, both
// after a GOAWAY (http3/client.go:243 and client.go:255).
// Transport.removeClient (http3/transport.go:422-429) only forgets a
// connection. Transport.Close and CloseIdleConnections close with code 0
// (transport.go:60), which reads "H3 error (0x0) (local)".
//
// The cause, step by step:
//   - ClientConn.openRequestStream refuses a new stream once a GOAWAY has
//     come (client.go:152), opens one (client.go:159), checks for a GOAWAY
//     again (client.go:170), and only then counts the stream as active
//     (client.go:176, rawConn.TrackStream, http3/conn.go:125-132).
//   - The control stream's reader marks the connection on a GOAWAY
//     (client.go:229-238), then closes it with H3_NO_ERROR at once if no
//     stream is active (client.go:240-243).
//   - A connection that had active streams is closed the same way when the
//     last one ends (onStreamsEmpty, client.go:249-256, called by
//     clearStream, conn.go:152-160).
//   - A request that passed client.go:170 before the reader's client.go:237,
//     but reaches client.go:176 only after the reader found no active
//     stream, or after the last one ended, is not counted: the connection
//     is closed under its open stream. A goroutine paused there for a moment
//     (a busy machine, the race detector) is enough.
//   - Its headers are written before the close, or fail (client.go:421-427).
//     Either way, ReadResponse (client.go:467) fails on the connection's
//     error (http3/stream.go:475-483): a local *quic.ApplicationError with
//     H3_NO_ERROR (connection.go:2278-2285), made an *http3.Error
//     (http3/error.go:66-73).
//   - Transport.doRoundTripOpt (transport.go:237-254) sends a failed
//     request again only if canRetryRequest (transport.go:259-287) accepts
//     its error: an errConnUnusable (no stream was opened) or
//     H3_REQUEST_REJECTED. This error is neither, so RoundTrip returns it.
//
// Why the error proves nothing about the upstream:
//   - A close by onStreamsEmpty runs under the lock that TrackStream takes,
//     and CloseWithError returns only once the connection is closed
//     (connection.go:2283). The request wrote nothing then.
//   - A close by the control stream's reader does not: hasActiveStreams
//     (conn.go:162-167) releases the lock before client.go:243 closes. In
//     between, the request may count its stream and write its headers and
//     body, and quic-go may send them before its CONNECTION_CLOSE.
//   - The server rejects only the streams it accepts after deciding on its
//     GOAWAY (http3/server.go:589-594). It accepts streams in order of ID
//     (streams_map_incoming.go:79-114), and a stream's arrival opens every
//     stream of a lower ID (streams_map_incoming.go:143-150).
//   - So a request whose goroutine paused after opening its stream, while a
//     later request's stream of a higher ID reached the server, has a stream
//     that the server accepted before its GOAWAY (server.go:596). The
//     server processes that request if its headers arrive before the
//     CONNECTION_CLOSE. RFC 9114, section 5.2, allows it: requests on
//     stream IDs below a GOAWAY's might have been processed.
//   - The error is the same in every case, and names neither the stream's
//     ID nor the GOAWAY's.
//
// TestFactLocalNoErrorNotResent pins the error, and that quic-go and
// teebody let it fail, deterministically: the test closes the connection
// with the call that client.go:243 and client.go:255 make, while the
// upstream holds the whole request. TestFactLocalNoErrorRacesGoAway makes
// quic-go close the connection itself, through client.go:243. The last
// step of that race, from client.go:170 to client.go:176, has no hook, so
// that test can only bring both goroutines close to their steps and tune
// the rest: it bounds its attempts, and skips, saying so, when none lands.

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	h3qlog "github.com/quic-go/quic-go/http3/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
	"github.com/teebody/teebody/pkg/transport"
)

// factTextLocalNoError is RoundTrip's error for a request whose stream was
// open when quic-go's client closed its connection with H3_NO_ERROR.
const factTextLocalNoError = "http3: parsing frame failed: H3_NO_ERROR (local)"

// isQuicLocalClose reports whether err has the shape of
// factTextLocalNoError: an *http3.Error with H3_NO_ERROR from this side,
// wrapping this side's *quic.ApplicationError that closed the connection,
// and no stream's error. The load test counts the requests that fail so
// apart from teebody's.
func isQuicLocalClose(err error) bool {
	h3err, ok := errors.AsType[*http3.Error](err)
	if !ok || h3err.ErrorCode != http3.ErrCodeNoError || h3err.Remote {
		return false
	}
	appErr, ok := errors.AsType[*quic.ApplicationError](err)
	if !ok || appErr.Remote || appErr.ErrorCode != quic.ApplicationErrorCode(http3.ErrCodeNoError) {
		return false
	}
	_, isStreamErr := errors.AsType[*quic.StreamError](err)
	return !isStreamErr
}

// assertLocalNoError checks that err is the local H3_NO_ERROR, and that
// teebody's ShouldRetryLater does not take it for proof.
func assertLocalNoError(t *testing.T, err error) {
	t.Helper()
	if err == nil || err.Error() != factTextLocalNoError {
		t.Fatalf("RoundTrip error %v, want %q", err, factTextLocalNoError)
	}
	if !isQuicLocalClose(err) {
		t.Errorf("%v: not an *http3.Error H3_NO_ERROR (local) around a local *quic.ApplicationError", err)
	}
	if transport.ShouldRetryLater(err) {
		t.Errorf("ShouldRetryLater(%q) = true; the upstream may have processed the request", err)
	}
}

// TestFactLocalNoErrorNotResent: a request whose connection its own client
// closes with H3_NO_ERROR while its stream is open fails with
// factTextLocalNoError, though GetBody is set: quic-go does not send it
// again. The upstream had the whole request by then, so the error is no
// proof that it did not.
func TestFactLocalNoErrorNotResent(t *testing.T) {
	var getBodys atomic.Int64
	lc := closeUnderRequest(t, func(client *http3.Transport, req *http.Request) error {
		getBody := req.GetBody
		req.GetBody = func() (io.ReadCloser, error) {
			getBodys.Add(1)
			return getBody()
		}
		resp, err := client.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	})
	assertLocalNoError(t, lc.err)
	if n := getBodys.Load(); n != 0 {
		t.Errorf("GetBody called %d times, want 0: quic-go sent the request again", n)
	}
	if n := lc.d.dialed(); n != 1 {
		t.Errorf("%d connections dialed, want 1", n)
	}
}

// TestTransportLocalNoErrorFails: teebody's Transport does not send such a
// request again either, and its ErrorHandler answers 502: a 429 would tell
// the client that it may safely send it again.
func TestTransportLocalNoErrorFails(t *testing.T) {
	var report transport.Report
	var rec *httptest.ResponseRecorder
	lc := closeUnderRequest(t, func(client *http3.Transport, req *http.Request) error {
		tr := transport.New(client, transport.DefaultConfig())
		req = req.WithContext(transport.WithReport(req.Context(), &report))
		req.GetBody = nil // as a server's request comes: teebody keeps the body
		req.Body = io.NopCloser(req.Body)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		rec = httptest.NewRecorder()
		tr.ErrorHandler(rec, req, err)
		return err
	})
	assertLocalNoError(t, lc.err)
	if !report.Buffered || report.Attempts != 1 {
		t.Errorf("Report %+v, want the body buffered and sent once", report)
	}
	if rec.Code != http.StatusBadGateway {
		t.Errorf("ErrorHandler answered %d, want 502", rec.Code)
	}
	if n := lc.d.dialed(); n != 1 {
		t.Errorf("%d connections dialed, want 1", n)
	}
}

// localClose is what closeUnderRequest saw.
type localClose struct {
	err error   // the round trip's
	d   *dialer // the client's
}

// closeUnderRequest sends a POST through roundTrip, with quic-go's client,
// to an upstream that reads the whole body and then holds the request.
// Once it holds it, the test closes the client's connection with the call
// of client.go:243 and client.go:255. The upstream must get the body once,
// intact.
func closeUnderRequest(t *testing.T, roundTrip func(*http3.Transport, *http.Request) error) localClose {
	t.Helper()
	got, finish := make(chan []byte, 2), make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		got <- b
		<-finish
	}), false)
	// Cleanups run last first: this one before the upstream's stop, which
	// waits for its handlers.
	t.Cleanup(func() { close(finish) })
	d := &dialer{}
	client := newClient(t, d)
	payload := randomPayload(t, 64<<10)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+up.addr+"/", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- roundTrip(client, req) }()
	select {
	case b := <-got:
		if !bytes.Equal(b, payload) {
			t.Errorf("the upstream got %d bytes, want the %d sent", len(b), len(payload))
		}
	case <-time.After(shutdownGrace):
		t.Fatal("the upstream never got the request")
	}
	d.mu.Lock()
	qc := d.qcs[0]
	d.mu.Unlock()
	qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
	lc := localClose{d: d}
	select {
	case lc.err = <-done:
	case <-time.After(shutdownGrace):
		// A request sent again would wait in the handler, as the first did.
		t.Fatal("the round trip did not return")
	}
	if len(got) != 0 {
		t.Errorf("the upstream got the request %d more times", len(got))
	}
	return lc
}

// The bounds of TestFactLocalNoErrorRacesGoAway: attempts, each one
// GOAWAY, and the time they may take in all.
const (
	raceAttempts = 100
	raceTime     = 6 * time.Second
	// raceSpinLimit bounds a hook's wait for the other goroutine to run.
	raceSpinLimit = 20 * time.Millisecond
)

// TestFactLocalNoErrorRacesGoAway makes quic-go's client close a
// connection under a request's open stream, on its own, when a GOAWAY
// comes: the request fails with factTextLocalNoError, and quic-go does
// not send it again.
//
// The request's goroutine stops in a hook just before client.go:170 (its
// request context's Done, called by the cancel of client.go:161); the
// control stream's reader stops in a hook just before client.go:229 (the
// qlog event of the GOAWAY, frames.go:313-319). Once both are there, they
// spin on a flag and go on together, the reader after offset. The request
// must pass client.go:170 before the reader's client.go:237, and count its
// stream (client.go:176) after the reader's client.go:240; neither step
// has a hook. An attempt that misses says on which side: the request
// either found the GOAWAY (no stream, resent by quic-go without GetBody),
// or counted its stream first (H3_REQUEST_REJECTED, resent with GetBody).
// Each miss moves offset towards the other side. The test stops at the
// first hit. Without one within raceAttempts and raceTime (a busy machine
// can keep the two goroutines from running at once), it skips, and says
// so: TestFactLocalNoErrorNotResent pins the error regardless.
func TestFactLocalNoErrorRacesGoAway(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the two goroutines must run at once: GOMAXPROCS < 2")
	}
	var processed atomic.Int64
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		processed.Add(1)
	}), false)
	rig := &raceRig{}
	d := &dialer{}
	_, pool := testCert(t)
	client := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		Dial:            d.dial,
		QUICConfig: &quic.Config{
			Tracer: func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace { return rig },
		},
	}
	t.Cleanup(func() {
		client.Close()
		d.Close()
	})

	var (
		offset              time.Duration // how long the reader waits after the request goes on
		step                = 250 * time.Nanosecond
		last                int // the previous miss: -1 early, +1 late
		early, late, missed int
	)
	deadline := time.Now().Add(raceTime)
	for attempt := 1; attempt <= raceAttempts && time.Now().Before(deadline); attempt++ {
		at := &raceAttempt{offset: offset, aPoised: make(chan struct{}), ctrlPoised: make(chan struct{})}
		rig.cur.Store(at)
		sent := processed.Load()
		req, getBodys := racePost(t, up.addr, at)
		done := make(chan error, 1)
		go func() {
			resp, err := client.RoundTrip(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
		at.await(t, at.aPoised, "the request never reached client.go:161")
		// A client can be done with its handshake before its server is.
		up.waitHanded(at.local)
		shutdown := up.restart()
		at.await(t, at.ctrlPoised, "the client never parsed the GOAWAY")
		var err error
		select {
		case err = <-done:
		case <-time.After(shutdownGrace):
			t.Fatal("the round trip did not return")
		}
		rig.cur.Store(nil)
		<-shutdown
		switch {
		case err != nil:
			assertLocalNoError(t, err)
			if n := getBodys.Load(); n != 0 {
				t.Errorf("GetBody called %d times, want 0", n)
			}
			// Here the server decided on its GOAWAY before any of the
			// request's stream reached it, and no stream of a higher ID
			// did: it rejected the stream if any of it came.
			if n := processed.Load() - sent; n != 0 {
				t.Errorf("the upstream processed %d requests, want none", n)
			}
			t.Logf("attempt %d: quic-go closed the connection under the request's stream (offset %v; %d misses early, %d late, %d unsynchronised)",
				attempt, at.offset, early, late, missed)
			return
		case getBodys.Load() == 0:
			// The request found the GOAWAY at client.go:170: the reader
			// went on too soon.
			early++
			step = nextStep(step, last == -1)
			last = -1
			offset += step
		default:
			// The request counted its stream before client.go:240.
			late++
			step = nextStep(step, last == +1)
			last = +1
			offset -= step
		}
		if !at.synced.Load() {
			missed++
		}
	}
	t.Skipf("no attempt met the window between client.go:170 and client.go:176 (%d early, %d late, %d of them "+
		"unsynchronised, last offset %v); the race was not reproduced, TestFactLocalNoErrorNotResent pins its error",
		early, late, missed, offset)
}

// nextStep returns the offset's next step: twice step after a miss on the
// same side as the one before, half of it after a miss on the other side.
// The window is about a microsecond wide, but the offset that finds it
// depends on the machine: under the race detector, a few microseconds on
// an idle one (a hit within ten attempts), hundreds on a busy one.
func nextStep(step time.Duration, sameSide bool) time.Duration {
	if sameSide {
		return min(2*step, 32*time.Microsecond)
	}
	return max(step/2, 25*time.Nanosecond)
}

// racePost returns a POST to addr whose context stops the request's
// goroutine in at's hook, and the count of its GetBody calls.
func racePost(t *testing.T, addr string, at *raceAttempt) (*http.Request, *atomic.Int64) {
	payload := []byte("race")
	getBodys := new(atomic.Int64)
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if at.local == nil {
			at.local = info.Conn.LocalAddr()
		}
	}}
	ctx := httptrace.WithClientTrace(&raceCtx{Context: t.Context(), at: at}, trace)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+"/", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.GetBody = func() (io.ReadCloser, error) {
		getBodys.Add(1)
		return io.NopCloser(bytes.NewReader(payload)), nil
	}
	return req, getBodys
}

// raceAttempt is one meeting of the request's goroutine and the control
// stream's reader. Each hook acts once.
type raceAttempt struct {
	offset time.Duration // > 0: the reader waits; < 0: the request waits
	local  net.Addr      // the request's first connection; set before aPoised closes

	aFired, ctrlFired   atomic.Bool
	aPoised, ctrlPoised chan struct{} // closed by each hook on arrival
	aRunning, release   atomic.Bool   // the barrier on which both spin
	synced              atomic.Bool   // both spun at once
}

// await waits for ch, closed by a hook; a hook that never comes fails the
// test.
func (at *raceAttempt) await(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(shutdownGrace):
		t.Fatal(msg)
	}
}

// spinUntil spins until f holds or d passes, and reports whether f held.
func spinUntil(f func() bool, d time.Duration) bool {
	limit := time.Now().Add(d)
	for !f() {
		if time.Now().After(limit) {
			return false
		}
	}
	return true
}

// spinFor spins for d: a sleep would let the goroutine go to another
// thread, microseconds later.
func spinFor(d time.Duration) {
	if d <= 0 {
		return
	}
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// requestHook runs in the request's goroutine just before client.go:170.
// It waits for the reader on a channel, then on the barrier, where it
// spins: a goroutine that a channel wakes runs microseconds to
// milliseconds later.
func (at *raceAttempt) requestHook() {
	close(at.aPoised)
	select {
	case <-at.ctrlPoised:
	case <-time.After(shutdownGrace):
		return // the test fails on it
	}
	at.aRunning.Store(true)
	if spinUntil(at.release.Load, raceSpinLimit) {
		spinFor(-at.offset)
	}
}

// readerHook runs in the control stream's reader just before
// client.go:229.
func (at *raceAttempt) readerHook() {
	close(at.ctrlPoised)
	if spinUntil(at.aRunning.Load, raceSpinLimit) {
		at.synced.Store(true)
	}
	at.release.Store(true)
	spinFor(at.offset)
}

// raceCtx is the request's context. Its Done is the request's hook when
// context.removeChild calls it for client.go:161, the cancel of the
// context that openRequestStream made for OpenStreamSync.
type raceCtx struct {
	context.Context
	at *raceAttempt
}

func (c *raceCtx) Done() <-chan struct{} {
	if !c.at.aFired.Load() && calledFrom("context.removeChild", "http3.(*ClientConn).openRequestStream") &&
		c.at.aFired.CompareAndSwap(false, true) {
		c.at.requestHook()
	}
	return c.Context.Done()
}

// calledFrom reports whether the caller's stack holds a function named
// inner and, further out, one whose name ends in outer.
func calledFrom(inner, outer string) bool {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	seen := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == inner:
			seen = true
		case seen && strings.HasSuffix(f.Function, outer):
			return true
		}
		if !more {
			return false
		}
	}
}

// raceRig is the client's qlog trace: the GOAWAY's FrameParsed event,
// which the control stream's reader records, is its hook. It ignores every
// other event.
type raceRig struct {
	cur atomic.Pointer[raceAttempt]
}

func (r *raceRig) AddProducer() qlogwriter.Recorder { return r }
func (r *raceRig) Close() error                     { return nil }

func (r *raceRig) RecordEvent(e qlogwriter.Event) {
	fp, ok := e.(h3qlog.FrameParsed)
	if !ok {
		return
	}
	switch fp.Frame.Frame.(type) {
	case h3qlog.GoAwayFrame, *h3qlog.GoAwayFrame:
	default:
		return
	}
	if at := r.cur.Load(); at != nil && at.ctrlFired.CompareAndSwap(false, true) {
		at.readerHook()
	}
}
