package connect_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"sync"

	"connectrpc.com/connect"
)

// The checked service's procedures, one per kind of call.
const (
	procUnary  = "/teebody.interop.Checked/Unary"
	procUpload = "/teebody.interop.Checked/Upload"
	procChat   = "/teebody.interop.Checked/Chat"
)

// ledger is the server's side of the checked service, shared by every
// server of a test. It checks every message, and records each call whose
// handler ran and each call it applied. A call is applied only once all of
// its messages arrived and checked, so a call cut short is never applied,
// and a call applied twice is one that reached the server twice.
type ledger struct {
	running sync.WaitGroup // handlers running

	mu      sync.Mutex
	started map[uint64]int // guarded by mu: handler runs per call id
	applied map[uint64]int // guarded by mu: applications per call id
	bad     int            // guarded by mu: messages that failed their check
	short   int            // guarded by mu: streams that ended cleanly before their last message
}

func newLedger() *ledger {
	return &ledger{started: map[uint64]int{}, applied: map[uint64]int{}}
}

// handler serves the three procedures with the test's codec.
func (l *ledger) handler() http.Handler {
	opt := connect.WithCodec(codec{})
	mux := http.NewServeMux()
	mux.Handle(procUnary, connect.NewUnaryHandler(procUnary, l.unary, opt))
	mux.Handle(procUpload, connect.NewClientStreamHandler(procUpload, l.upload, opt))
	mux.Handle(procChat, connect.NewBidiStreamHandler(procChat, l.chat, opt))
	return mux
}

// enter counts a running handler; the returned function ends it.
func (l *ledger) enter() func() {
	l.running.Add(1)
	return l.running.Done
}

func (l *ledger) start(id uint64) {
	l.mu.Lock()
	l.started[id]++
	l.mu.Unlock()
}

func (l *ledger) apply(id uint64) {
	l.mu.Lock()
	l.applied[id]++
	l.mu.Unlock()
}

// check checks that m is message seq of the of messages of call id, with
// the payload that the client makes for it.
func (l *ledger) check(m *msg, id uint64, seq, of uint32) error {
	if m.Call == id && m.Seq == seq && m.Of == of && m.Sum == crc32.ChecksumIEEE(m.Payload) && bytes.Equal(m.Payload, payload(id, seq)) {
		return nil
	}
	l.mu.Lock()
	l.bad++
	l.mu.Unlock()
	return connect.NewError(connect.CodeDataLoss, fmt.Errorf("message %d of call %d does not check", seq, id))
}

// cutShort records a stream that ended cleanly after n of its of messages.
func (l *ledger) cutShort(id uint64, n, of uint32) error {
	l.mu.Lock()
	l.short++
	l.mu.Unlock()
	return connect.NewError(connect.CodeDataLoss, fmt.Errorf("call %d ended after %d of %d messages", id, n, of))
}

// timesApplied returns how many times call id was applied.
func (l *ledger) timesApplied(id uint64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.applied[id]
}

// tally is what the server saw.
type tally struct {
	started, applied int // call ids whose handler ran, that were applied
	startedTwice     int // call ids whose handler ran more than once
	appliedTwice     int // call ids applied more than once
	bad, short       int // messages that failed their check; streams cut short
}

func (l *ledger) tally() tally {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := tally{started: len(l.started), applied: len(l.applied), bad: l.bad, short: l.short}
	for _, n := range l.started {
		if n > 1 {
			t.startedTwice++
		}
	}
	for _, n := range l.applied {
		if n > 1 {
			t.appliedTwice++
		}
	}
	return t
}

func (l *ledger) unary(_ context.Context, req *connect.Request[msg]) (*connect.Response[msg], error) {
	defer l.enter()()
	m := req.Msg
	l.start(m.Call)
	if err := l.check(m, m.Call, 0, 1); err != nil {
		return nil, err
	}
	l.apply(m.Call)
	return connect.NewResponse(&msg{Call: m.Call, Of: 1, Sum: m.Sum}), nil
}

// upload answers a client stream with its count and the checksum of its
// payloads.
func (l *ledger) upload(_ context.Context, s *connect.ClientStream[msg]) (*connect.Response[msg], error) {
	defer l.enter()()
	var id uint64
	var n, of uint32
	sum := crc32.NewIEEE()
	for ; s.Receive(); n++ {
		m := s.Msg()
		if n == 0 {
			id, of = m.Call, m.Of
			l.start(id)
		}
		if err := l.check(m, id, n, of); err != nil {
			return nil, err
		}
		sum.Write(m.Payload)
	}
	if err := s.Err(); err != nil {
		return nil, err // the stream broke: nothing is applied
	}
	if n == 0 || n != of {
		return nil, l.cutShort(id, n, of)
	}
	l.apply(id)
	return connect.NewResponse(&msg{Call: id, Seq: n, Of: of, Sum: sum.Sum32()}), nil
}

// chat echoes each message's call, index and checksum as it arrives.
func (l *ledger) chat(_ context.Context, s *connect.BidiStream[msg, msg]) error {
	defer l.enter()()
	var id uint64
	var of uint32
	for n := uint32(0); ; n++ {
		m, err := s.Receive()
		if errors.Is(err, io.EOF) {
			if n == 0 || n != of {
				return l.cutShort(id, n, of)
			}
			l.apply(id)
			return nil
		}
		if err != nil {
			return err // the stream broke: nothing is applied
		}
		if n == 0 {
			id, of = m.Call, m.Of
			l.start(id)
		}
		if err := l.check(m, id, n, of); err != nil {
			return err
		}
		if err := s.Send(&msg{Call: id, Seq: n, Of: of, Sum: m.Sum}); err != nil {
			return err
		}
	}
}
