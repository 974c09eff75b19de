package transport_test

import (
	"fmt"
	"strings"

	"golang.org/x/net/http2"

	"github.com/teebody/teebody/pkg/transport"
)

// A script is what one FuzzUpstream input plays: the Transport's Config,
// the client in front of it, the requests sent at once, and what the
// upstream does with each attempt of each request. decodeScript reads it
// from the fuzzer's bytes; every byte string is a script.
type script struct {
	cfg   int  // an index into fuzzConfigs
	proxy bool // through httputil.ReverseProxy with ErrorHandler, else http.Client
	h1    bool // an HTTP/1.1 upstream (h1Upstream), else HTTP/2 (h2Upstream)
	reqs  []fuzzRequest
}

// fuzzLimit is the per-request limit of the tiny Configs, and the size a
// body "at the limit" has under every Config.
const fuzzLimit = 4 << 10

// fuzzConfigs are the Configs a script picks from: the default, a tiny
// per-request limit, a tiny total that three bodies share, and adaptive
// mode with its floor.
var fuzzConfigs = []struct {
	name string
	cfg  transport.Config
}{
	{"default", transport.Config{}},
	{"limit", transport.Config{PerRequestBytes: fuzzLimit}},
	{"budget", transport.Config{TotalBytes: fuzzLimit + fuzzLimit/2, PerRequestBytes: fuzzLimit}},
	{"adaptive", transport.Config{PerRequestBytes: fuzzLimit, Adaptive: true, AdaptiveFloorBytes: fuzzLimit / 4}},
}

// fuzzRequest is one request of a script: its body and the upstream's plan
// for each of its attempts, in the order the upstream sees them. An
// attempt beyond the plans is read in full, applied and answered 200.
type fuzzRequest struct {
	size  int  // body bytes
	known bool // sent with a Content-Length
	idem  bool // sent with an Idempotency-Key, which net/http's HTTP/1 transport may resend
	plans []streamPlan
}

// The points of a stream at which the upstream acts.
const (
	atHeaders = iota // on the request's headers, before any body byte
	atSome           // once it has received streamPlan.some bytes, or the body's end
	atEnd            // at the body's end
	atCount
)

// The upstream's actions on a stream.
const (
	actAnswer = iota // HEADERS, optional DATA and trailers
	actReset         // RST_STREAM with streamPlan.code
	actGoAway        // GOAWAY, then streamPlan.then
	actClose         // close the connection
	actStall         // nothing: the client gives up
	actCount
)

// What the upstream does on the stream after its GOAWAY.
const (
	thenNothing = iota
	thenClose
	thenAnswer
	thenCount
)

// The last stream IDs of a GOAWAY, relative to the stream that sends it.
const (
	lastZero   = iota // 0: refuses every stream
	lastBelow         // the stream's ID - 2
	lastStream        // the stream's own ID
	lastAbove         // the stream's ID + 2
	lastMax           // 2³¹-1
	lastCount
)

// streamPlan is what the upstream does with one attempt of a request.
type streamPlan struct {
	at    int  // atHeaders, atSome or atEnd
	some  int  // for atSome
	apply bool // record the request and the bytes received as applied, then act
	act   int  // actAnswer, ...

	status   int  // actAnswer and thenAnswer
	data     bool // the answer has a body
	trailers bool // the answer has trailers

	code  http2.ErrCode // actReset and actGoAway
	last  int           // actGoAway: lastZero, ...
	debug []byte        // actGoAway
	then  int           // actGoAway: thenNothing, ...
}

// answerStatuses are the statuses the upstream answers with; never 429,
// so that a 429 is always the Transport's.
var answerStatuses = []int{200, 201, 400, 500, 503}

// errCodes are the codes of RST_STREAM and GOAWAY that a script picks
// from, the last one being any code the byte gives.
var errCodes = []http2.ErrCode{http2.ErrCodeNo, http2.ErrCodeProtocol, http2.ErrCodeRefusedStream,
	http2.ErrCodeInternal, http2.ErrCodeCancel, http2.ErrCodeEnhanceYourCalm, http2.ErrCodeFlowControl}

// debugTexts are the GOAWAY debug data a script picks from: every text
// that Go builds into a transport error a proof could be read from, and
// every text some part of this library once matched (provingTexts),
// which a peer can put where an error quotes it.
var debugTexts = append([]string{
	"",
	"graceful shutdown",
	"http2: Transport received Server's graceful shutdown GOAWAY",
	"http2: client conn not usable",
	"stream error: stream ID 1; REFUSED_STREAM; received from peer",
	"stream error: stream ID 3; PROTOCOL_ERROR; received from peer",
	"http2: Transport: cannot retry err [http2: client conn not usable] after Request.Body was written; " +
		"define Request.GetBody to avoid this error",
	"error trying to reach service: ",
	"connection in graceful shutdown",
}, provingTexts...)

// scriptReader hands out the fuzzer's bytes, and zeros once they run out.
type scriptReader struct{ b []byte }

func (r *scriptReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// maxPlans is the most attempts of a request a script plans.
const maxPlans = 3

// decodeScript reads a script from b. Its first byte picks the Config,
// the client, the number of requests and the protocol; then, for each
// request, a byte for its body, a byte for its Idempotency-Key and its
// number of plans, and a plan each.
func decodeScript(b []byte) *script {
	r := &scriptReader{b: b}
	head := r.byte()
	s := &script{cfg: int(head) % len(fuzzConfigs), proxy: head>>2&1 == 1, h1: head>>5&1 == 1}
	n := 1 + int(head>>3&3)%3
	for range n {
		s.reqs = append(s.reqs, decodeRequest(r))
	}
	return s
}

func decodeRequest(r *scriptReader) fuzzRequest {
	c := r.byte()
	req := fuzzRequest{known: c&1 == 1}
	switch c >> 1 % 4 {
	case 0:
		req.size = 0
	case 1:
		req.size = 1 + int(c>>3)*3 // small: 1 to 94
	case 2:
		req.size = fuzzLimit
	case 3:
		req.size = fuzzLimit + 1 + int(c>>3)*97 // over it, by up to 3 KiB
	}
	c = r.byte()
	req.idem = c>>2&1 == 1
	for range int(c&3) % (maxPlans + 1) {
		req.plans = append(req.plans, decodePlan(r, req.size))
	}
	return req
}

func decodePlan(r *scriptReader, size int) streamPlan {
	c := r.byte()
	p := streamPlan{at: int(c&3) % atCount, apply: c>>2&1 == 1, act: int(c>>3) % actCount}
	if p.at == atSome && size > 0 {
		p.some = int(r.byte()) * size / 256
	}
	switch p.act {
	case actAnswer:
		p.decodeAnswer(r)
	case actReset:
		p.code = decodeCode(r)
	case actGoAway:
		p.code = decodeCode(r)
		c := r.byte()
		p.last = int(c&7) % lastCount
		p.then = int(c>>3) % thenCount
		if p.then == thenAnswer {
			p.decodeAnswer(r)
		}
		d := r.byte()
		if d < 128 {
			p.debug = []byte(debugTexts[int(d)%len(debugTexts)])
		} else {
			p.debug = make([]byte, int(d)%16)
			for i := range p.debug {
				p.debug[i] = r.byte()
			}
		}
	}
	return p
}

func (p *streamPlan) decodeAnswer(r *scriptReader) {
	c := r.byte()
	p.status = answerStatuses[int(c&7)%len(answerStatuses)]
	p.data = c>>3&1 == 1
	p.trailers = c>>4&1 == 1
}

func decodeCode(r *scriptReader) http2.ErrCode {
	c := r.byte()
	if int(c) < 8*len(errCodes) {
		return errCodes[int(c)%len(errCodes)]
	}
	return http2.ErrCode(c) // 0x0-0xff: the known codes and unknown ones
}

// plan returns the plan for attempt n (0 for the first) of request i.
func (s *script) plan(i, n int) streamPlan {
	if n < len(s.reqs[i].plans) {
		return s.reqs[i].plans[n]
	}
	return streamPlan{at: atEnd, apply: true, act: actAnswer, status: 200, data: true}
}

// connLevel reports whether any plan of s may change what the client does
// with the other streams of its connection, and so the fate of the other
// requests: a GOAWAY or a close; an RST_STREAM PROTOCOL_ERROR, after which
// Go's client opens no new stream on the connection, so that a request
// about to start one fails over to another connection, or, if it had read
// its body without GetBody, fails with net/http's "cannot rewind body"
// (found by FuzzUpstream on net/http's transport alone, 7 times in 3,000
// runs of one script); a stall, which the client ends by cancelling its
// stream, after which Go's client may hold back new streams until a PING
// comes back.
func (s *script) connLevel() bool {
	for _, r := range s.reqs {
		for _, p := range r.plans {
			switch {
			case p.act == actGoAway, p.act == actClose, p.act == actStall,
				p.act == actReset && p.code == http2.ErrCodeProtocol:
				return true
			}
		}
	}
	return false
}

func (s *script) String() string {
	var b strings.Builder
	kind := "client"
	if s.proxy {
		kind = "proxy"
	}
	proto := "HTTP/2"
	if s.h1 {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(&b, "config %s, %s, %s upstream", fuzzConfigs[s.cfg].name, kind, proto)
	for i, r := range s.reqs {
		fmt.Fprintf(&b, "\n  request %d: %d bytes, known length %v, Idempotency-Key %v", i, r.size, r.known, r.idem)
		for n, p := range r.plans {
			fmt.Fprintf(&b, "\n    attempt %d: %s", n+1, p)
		}
	}
	return b.String()
}

func (p streamPlan) String() string {
	at := [...]string{"on headers", fmt.Sprintf("after %d bytes", p.some), "at the end"}[p.at]
	s := at
	if p.apply {
		s += ", apply"
	}
	switch p.act {
	case actAnswer:
		s += ", " + p.answerString()
	case actReset:
		s += fmt.Sprintf(", RST_STREAM %v", p.code)
	case actGoAway:
		last := [...]string{"0", "id-2", "id", "id+2", "max"}[p.last]
		s += fmt.Sprintf(", GOAWAY last %s %v debug %q", last, p.code, p.debug)
		s += [...]string{"", ", then close", ", then " + p.answerString()}[p.then]
	case actClose:
		s += ", close the connection"
	case actStall:
		s += ", stall"
	}
	return s
}

func (p streamPlan) answerString() string {
	return fmt.Sprintf("answer %d (data %v, trailers %v)", p.status, p.data, p.trailers)
}
