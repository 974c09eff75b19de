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

// TestWrapSharesOneBudget: the Transports made by one Wrap charge one
// budget, so what one holds shows in the other's BytesHeld.
func TestWrapSharesOneBudget(t *testing.T) {
	gotAll := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(gotAll) // the whole body went through, and is still kept for a replay
		<-release
	}))
	t.Cleanup(srv.Close)

	cfg := quietConfig()
	wrap := transport.Wrap(cfg)
	tr1 := wrap(h1Client(t)).(*transport.Transport)
	tr2 := wrap(h1Client(t)).(*transport.Transport)
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
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if held < int64(len(body.data)) {
		t.Errorf("the other Transport saw %d bytes held while the first kept %d", held, len(body.data))
	}
	drain(t, tr1)
	if st := tr2.Stats(); st.BytesHeld != 0 || st.Requests != 0 {
		t.Errorf("tr2 stats %+v: want its own counters and the shared budget back to 0", st)
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
