package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// The transport alone: what transport.New adds to each buffered request,
// measured without sockets, TLS or a server, around an inner RoundTripper
// that does what the HTTP/2 transport does with an upload (reads the body to
// its end, in pieces of up to 512 KiB, closes it, answers) and nothing else.

// drainer is the inner RoundTripper: it reads each request body to io.EOF
// into its buffer, closes it and answers 200 with a short body. It is used
// by one goroutine at a time.
type drainer struct {
	buf  []byte
	resp bytes.Reader // the response body, reused
}

func (d *drainer) RoundTrip(req *http.Request) (*http.Response, error) {
	for {
		_, err := req.Body.Read(d.buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	req.Body.Close()
	d.resp.Reset([]byte(statusOK))
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(&d.resp), ContentLength: int64(len(statusOK)),
		Request: req}, nil
}

// aloneCase is one request of a given size, through rt, that can be sent
// again and again; send sends it, closes the response and waits until the
// transport has released everything (so that every send starts alike).
type aloneCase struct {
	rt    http.RoundTripper
	tr    *transport.Transport // nil for the inner transport alone
	req   *http.Request
	body  *rewindableBody
	data  []byte
	reply []byte
}

// rewindableBody is a request body that can be sent again without
// allocating, as a server's body would be a new one each time. Like a
// server's body read from a socket, it returns at most alonePiece bytes per
// Read (a copy of 1 MiB or more at once would also take another path in
// runtime.memmove, with stores that bypass the cache).
type rewindableBody struct{ bytes.Reader }

func (b *rewindableBody) Read(p []byte) (int, error) {
	return b.Reader.Read(p[:min(len(p), alonePiece)])
}

func (*rewindableBody) Close() error { return nil }

// alonePiece is the most a read of the request body returns: the client's
// write size, what a proxy's socket read returns when it keeps up (out of
// process the proxy reads more at a time once it falls behind).
const alonePiece = 32 * kib

func newAloneCase(tb testing.TB, size int, buffered bool) *aloneCase {
	c := &aloneCase{body: &rewindableBody{}, data: payload()[:size], reply: make([]byte, 512)}
	inner := &drainer{buf: make([]byte, 512*kib)}
	c.rt = inner
	if buffered {
		c.tr = transport.New(inner, transport.DefaultConfig())
		c.rt = c.tr
	}
	req, err := http.NewRequest(http.MethodPut, "https://upstream.invalid/api/v1/namespaces/bench/configmaps/cm", c.body)
	if err != nil {
		tb.Fatal(err)
	}
	req.ContentLength = int64(size)
	c.req = req
	return c
}

func (c *aloneCase) send(tb testing.TB) {
	c.body.Reset(c.data)
	resp, err := c.rt.RoundTrip(c.req)
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := resp.Body.Read(c.reply); err == io.EOF {
			break
		} else if err != nil {
			tb.Fatal(err)
		}
	}
	resp.Body.Close()
	if c.tr != nil {
		if err := c.tr.Drain(context.Background()); err != nil {
			tb.Fatal(err)
		}
	}
}

// aloneSizes are the sizes of the allocation figures.
var aloneSizes = []int{1 * kib, 64 * kib, 1 * mib}

// TestAllocsPerBufferedRequest pins what transport.New adds to a buffered
// request, beyond its inner transport's own allocations: the Tee (its first
// follower and its reference count are part of it), the filler goroutine,
// the request's exchange (the copy of the request and the wrapped response
// body in one), the exchange's GetBody method value, and the channel Drain
// waits on, made each time the number of buffered requests in flight leaves
// 0 (here every time: one request at a time). A request without a BodyTrace
// hands its Tee no method value of its own to call when it is done.
// Its chunks come from the pool, so the figure does not grow with the body.
// A change that allocates per byte, per chunk or per Read fails here.
func TestAllocsPerBufferedRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	const budget = 5 // allocations per buffered request, beyond the inner transport's
	for _, size := range aloneSizes {
		t.Run(proxytest.SizeName(size), func(t *testing.T) {
			plain, tee := newAloneCase(t, size, false), newAloneCase(t, size, true)
			plain.send(t)
			tee.send(t) // fill the chunk pool
			inner := testing.AllocsPerRun(50, func() { plain.send(t) })
			got := testing.AllocsPerRun(50, func() { tee.send(t) })
			t.Logf("%s: %.1f allocations per request through transport.New, %.1f through the inner transport alone",
				proxytest.SizeName(size), got, inner)
			if got-inner > budget {
				t.Errorf("transport.New adds %.1f allocations per buffered request, want at most %d", got-inner, budget)
			}
		})
	}
}

// BenchmarkTransportAlone reports allocations and bytes allocated per
// request through the inner transport alone (transport=plain) and through
// transport.New around it (transport=teebody), and the wall and CPU time of
// each (cpu-s: the process's, every goroutine's), which is the transports'
// own work with no I/O around it.
func BenchmarkTransportAlone(b *testing.B) {
	for _, size := range aloneSizes {
		for _, buffered := range []bool{false, true} {
			kind := kindPlain
			if buffered {
				kind = kindTeebody
			}
			b.Run(fmt.Sprintf("size=%s/transport=%s", proxytest.SizeName(size), kind), func(b *testing.B) {
				c := newAloneCase(b, size, buffered)
				c.send(b)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					c.send(b)
				}
				reportCPU(b, cpuTime()-cpu0)
			})
		}
	}
}

// TestAllocsReport pins that a Report costs a buffered request no
// allocation: the caller's context carries it, and RoundTrip fills it in
// place.
func TestAllocsReport(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	bare, reported := newAloneCase(t, 64*kib, true), newAloneCase(t, 64*kib, true)
	var r transport.Report
	reported.req = reported.req.WithContext(transport.WithReport(reported.req.Context(), &r))
	bare.send(t)
	reported.send(t) // fill the chunk pool
	without := testing.AllocsPerRun(50, func() { bare.send(t) })
	with := testing.AllocsPerRun(50, func() { reported.send(t) })
	if with > without {
		t.Errorf("a buffered request takes %.1f allocations with a Report, %.1f without; want no more", with, without)
	}
	if !r.Buffered || r.Attempts != 1 || r.PeakBytes < 64*kib {
		t.Errorf("Report = %+v; want Buffered, 1 attempt, PeakBytes >= %d", r, 64*kib)
	}
}

// BenchmarkReport measures a buffered request through transport.New without
// a Report (report=none) and with one in its context (report=used).
func BenchmarkReport(b *testing.B) {
	for _, used := range []bool{false, true} {
		name := "report=none"
		if used {
			name = "report=used"
		}
		b.Run(name, func(b *testing.B) {
			c := newAloneCase(b, 1*kib, true)
			var r transport.Report
			if used {
				c.req = c.req.WithContext(transport.WithReport(c.req.Context(), &r))
			}
			c.send(b)
			b.ReportAllocs()
			for b.Loop() {
				c.send(b)
			}
		})
	}
}
