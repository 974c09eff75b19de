package connect_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/teebody/teebody/pkg/transport"
)

// TestBidiAnsweredBeforeShutdown follows one bidi call whose server answers
// (response headers and a first message) before the client has sent
// everything, and whose server then shuts down gracefully while the client
// still sends. It runs through teebody's transport and through the plain
// one, over h2c, with no sleep: each step waits for the one before it.
//
// Once the answer arrived, RoundTrip has returned and the Tee is sealed: no
// replay can follow. That costs nothing here. A GOAWAY refuses only streams
// above its last stream ID, and the server's GOAWAY names this call's stream
// (the watcher reads it off the wire): the server had accepted the stream,
// so no refusal can reach it, and Go's transport asks for GetBody only
// before RoundTrip returns anyway.
//
//   - "graceful": Shutdown waits for the call. The client sends the rest of
//     its messages after the GOAWAY and the call succeeds, applied once.
//   - "grace ends": the rollout's grace runs out first (Shutdown's context
//     ends, then Close). The client sees an error of code internal, the
//     same through both transports, which ShouldRetryLater rejects; the
//     server applied nothing, and teebody's transport served and refused no
//     replay. Only the caller can make such a call again, knowing that the
//     server had started it.
func TestBidiAnsweredBeforeShutdown(t *testing.T) {
	for _, fixed := range []bool{true, false} {
		arm := map[bool]string{true: "teebody", false: "plain"}[fixed]
		t.Run(arm+"/graceful", func(t *testing.T) { answeredBidi(t, fixed, false) })
		t.Run(arm+"/grace ends", func(t *testing.T) { answeredBidi(t, fixed, true) })
	}
}

func answeredBidi(t *testing.T, fixed, graceEnds bool) {
	led := newLedger()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: led.handler(), Protocols: new(http.Protocols), ErrorLog: log.New(io.Discard, "", 0)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	var serveErr error
	served := make(chan struct{})
	go func() {
		defer close(served)
		serveErr = srv.Serve(ln)
	}()
	defer func() {
		srv.Close() // after a failure; a no-op otherwise
		<-served
	}()

	w := newGoawayWatcher()
	inner := w.transport()
	defer inner.CloseIdleConnections()
	var rt http.RoundTripper = inner
	var tr *transport.Transport
	if fixed {
		tr = transport.New(inner, transport.DefaultConfig())
		rt = tr
	}
	c := newClients(&http.Client{Transport: rt}, "http://"+ln.Addr().String())

	const id, of = 1, 4
	var report transport.Report
	ctx, cancel := context.WithTimeout(transport.WithReport(context.Background(), &report), callTimeout)
	defer cancel()
	s := c[chat].CallBidiStream(ctx)
	defer s.CloseResponse()
	exchange := func(seq uint32) {
		t.Helper()
		m := newMsg(id, seq, of)
		if err := s.Send(m); err != nil {
			t.Fatalf("send %d: %v", seq, err)
		}
		res, err := s.Receive()
		if err != nil {
			t.Fatalf("echo %d: %v", seq, err)
		}
		if res.Call != id || res.Seq != seq || res.Sum != m.Sum {
			t.Fatalf("echo %d: %d/%d %x; want %d/%d %x", seq, res.Call, res.Seq, res.Sum, id, seq, m.Sum)
		}
	}

	// The server answers: its headers and first message are here, so
	// RoundTrip has returned, and the Tee is sealed.
	exchange(0)
	if fixed && (!report.Buffered || report.Attempts != 1 || report.Refused != 0) {
		t.Errorf("report once answered: %+v; want buffered, 1 attempt, no refusal", report)
	}
	// The client sends more after the answer.
	exchange(1)

	grace, endGrace := context.WithCancel(context.Background())
	defer endGrace()
	shutdown := make(chan error, 1)
	go func() { shutdown <- srv.Shutdown(grace) }()
	select {
	case <-w.seen:
	case <-time.After(callTimeout): // a bound, not a wait
		t.Fatal("no GOAWAY reached the client")
	}
	if last := w.lastStreamID(); last != 1 {
		t.Errorf("the GOAWAY's last stream ID is %d; want 1, the call's stream", last)
	}
	// The stream lives on after the GOAWAY: the server had accepted it.
	exchange(2)

	if !graceEnds {
		exchange(3)
		if err := s.CloseRequest(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Receive(); !errors.Is(err, io.EOF) {
			t.Fatalf("end of the call: %v; want io.EOF", err)
		}
		inner.CloseIdleConnections() // which Shutdown waits for
		if err := <-shutdown; err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	} else {
		endGrace()
		if err := <-shutdown; !errors.Is(err, context.Canceled) {
			t.Errorf("Shutdown: %v; want context.Canceled, the call still open", err)
		}
		srv.Close() // what a rollout does once the grace is over
		// The client waits for the next echo, and the stream breaks under
		// it: connect-go reports a read that ended without io.EOF as
		// internal, "protocol error: incomplete envelope", around Go's
		// "http2: server sent GOAWAY and closed the connection;
		// LastStreamID=1, ...".
		_, err := s.Receive()
		t.Logf("the client sees: %v", err)
		if code := connect.CodeOf(err); err == nil || code != connect.CodeInternal {
			t.Errorf("after the server closed: %v (code %v); want an error of code internal", err, code)
		}
		// Its text quotes a GOAWAY, but the server had started the call:
		// nothing proves that it did not process it.
		if transport.ShouldRetryLater(err) {
			t.Errorf("ShouldRetryLater(%v) is true; the server had started the call", err)
		}
		s.CloseRequest()
	}
	<-served
	if !errors.Is(serveErr, http.ErrServerClosed) {
		t.Errorf("Serve: %v", serveErr)
	}

	led.running.Wait()
	got := led.tally()
	wantApplied := 1
	if graceEnds {
		wantApplied = 0
	}
	if got.started != 1 || got.startedTwice != 0 || got.applied != wantApplied || got.appliedTwice != 0 || got.bad != 0 || got.short != 0 {
		t.Errorf("server: %+v; want the call started once, applied %d times, every message intact", got, wantApplied)
	}
	if fixed {
		st := tr.Stats()
		if st.Buffered != 1 || st.ReplaysServed != 0 || refused(st.ReplaysRefused) != 0 {
			t.Errorf("stats: %d buffered, %d replays served, %d refused; want 1, 0, 0", st.Buffered, st.ReplaysServed, refused(st.ReplaysRefused))
		}
	}
}
