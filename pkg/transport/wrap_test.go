package transport_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

// TestWrapSharesState: the Transports that one Transport's Wrap made
// charge its budget, count in its Stats and hold up its Drain, while each
// sends through its own inner RoundTripper.
func TestWrapSharesState(t *testing.T) {
	gotAll := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(gotAll) // the whole body went through, and is still kept for a replay
		<-release
	}))
	t.Cleanup(srv.Close)

	tr := transport.New(nil, quietConfig())
	inner1, inner2 := h1Client(t), h1Client(t)
	tr1 := tr.Wrap(inner1).(*transport.Transport)
	tr2 := tr.Wrap(inner2).(*transport.Transport)
	if tr1.WrappedRoundTripper() != inner1 || tr2.WrappedRoundTripper() != inner2 {
		t.Fatal("a wrapped Transport does not send through the RoundTripper it wraps")
	}
	body := uniformBodies(3, 1, 100<<10, 100<<10)[0]

	done := make(chan error, 1)
	go func() {
		resp, err := tr1.RoundTrip(newPost(context.Background(), srv.URL, body, ""))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-gotAll
	held := tr2.Stats().BytesHeld
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	drainErr := tr.Drain(canceled)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if held < int64(len(body.data)) {
		t.Errorf("the other Transport saw %d bytes held while the first kept %d", held, len(body.data))
	}
	if drainErr != context.Canceled {
		t.Errorf("Drain of the first Transport returned %v while a wrapped one held a request, want context.Canceled", drainErr)
	}
	drain(t, tr)
	for name, st := range map[string]transport.Stats{"tr": tr.Stats(), "tr1": tr1.Stats(), "tr2": tr2.Stats()} {
		if st.BytesHeld != 0 || st.Requests != 1 || st.Buffered != 1 {
			t.Errorf("%s: BytesHeld %d, Requests %d, Buffered %d; want 0, 1, 1: one request counted by all", name, st.BytesHeld, st.Requests, st.Buffered)
		}
	}
}

// bothRoundTripper breaks the RoundTripper contract on purpose: it returns
// the real transport's response together with an error.
type bothRoundTripper struct {
	rt     http.RoundTripper
	closed chan struct{}
}

type closeSignal struct {
	io.ReadCloser
	closed chan struct{}
}

func (c closeSignal) Close() error {
	close(c.closed)
	return c.ReadCloser.Close()
}

func (b bothRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = closeSignal{resp.Body, b.closed}
	return resp, errors.New("test: both a response and an error")
}

// TestNeverResponseAndError: from an inner RoundTripper that returns both,
// the Transport returns only the error, closes the response body, and
// releases the request.
func TestNeverResponseAndError(t *testing.T) {
	srv := newEcho(t)
	inner := bothRoundTripper{rt: h1Client(t), closed: make(chan struct{})}
	tr := transport.New(inner, quietConfig())
	resp, err := tr.RoundTrip(newPost(context.Background(), srv.URL, uniformBodies(4, 1, 10, 10)[0], ""))
	if resp != nil || err == nil {
		t.Fatalf("RoundTrip = %v, %v; want nil and the error", resp, err)
	}
	select {
	case <-inner.closed: // RoundTrip closed it before returning
	default:
		t.Error("RoundTrip returned without closing the response body it dropped")
	}
	drain(t, tr)
}

// TestEmptyResponseEndsAtOnce: a response with http.NoBody to a request
// whose body was sent whole before it came ends the request at once,
// without waiting for a Close that callers often skip.
func TestEmptyResponseEndsAtOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	tr := transport.New(h1Client(t), quietConfig())
	resp, err := tr.RoundTrip(newPost(context.Background(), srv.URL, uniformBodies(5, 1, 1000, 1000)[0], ""))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNoContent || resp.Body != http.NoBody {
		t.Errorf("status %s, body %T; want 204 with http.NoBody", resp.Status, resp.Body)
	}
	drain(t, tr) // without closing the response body
}
