package noisytest

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Uploads are connections to the front that each send a POST's headers,
// then part of its body, and stall.
type Uploads struct {
	N      int
	Length int64       // the Content-Length they announce
	Sent   int64       // the bytes of body they send: the first Sent of Body
	Body   []byte      // at least Sent bytes
	Header http.Header // more header fields, if any

	// Settled, if not nil, is called after each upload opens, with how
	// many are open. An error from it fails the test.
	Settled func(open int) error
}

// Stall opens u's connections to the front, one after another. They stay
// open until tb ends, and close before the Stack does.
func (s *Stack) Stall(tb testing.TB, u Uploads) {
	tb.Helper()
	addr := s.Front.Listener.Addr().String()
	var b strings.Builder
	b.WriteString("POST / HTTP/1.1\r\nHost: " + addr + "\r\n")
	u.Header.Write(&b)
	b.WriteString("Content-Length: " + strconv.FormatInt(u.Length, 10) + "\r\n\r\n")
	head := b.String()
	conns := make([]net.Conn, 0, u.N)
	tb.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range u.N {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			tb.Fatal(err)
		}
		conns = append(conns, c)
		go func() { // writes block once the transport stops reading: ended by closing c
			if _, err := io.WriteString(c, head); err == nil {
				_, _ = c.Write(u.Body[:u.Sent])
			}
		}()
		if u.Settled != nil {
			if err := u.Settled(len(conns)); err != nil {
				tb.Fatal(err)
			}
		}
	}
}
