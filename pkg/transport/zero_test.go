package transport_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// TestZeroTransport: the zero Transport is New(nil, DefaultConfig()). Its
// first calls, of every method at once from several goroutines, find it
// ready: the bodies are buffered and answered, the refusals answered 429,
// and it reports the default Config and http.DefaultTransport.
func TestZeroTransport(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	defer up.Close()
	var tr transport.Transport
	defer tr.CloseIdleConnections()

	firsts := []func(){
		func() { tr.Stats() },
		func() { tr.Config() },
		func() { tr.Drain(t.Context()) },
		func() { tr.Wrap(nil) },
		func() {
			tr.ErrorHandler(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil), teebody.ErrNotReplayable)
		},
		func() {
			tr.Responder().Error(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil), teebody.ErrNotReplayable)
		},
		func() { tr.WrappedRoundTripper() },
		func() { tr.CloseIdleConnections() },
		func() {},
	}
	var wg sync.WaitGroup
	for i, first := range firsts {
		wg.Go(func() {
			first()
			want := strings.Repeat("x", 1+i)
			req, err := http.NewRequest(http.MethodPost, up.URL, hiddenReader{strings.NewReader(want)})
			if err != nil {
				t.Error(err)
				return
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if got, err := io.ReadAll(resp.Body); err != nil || string(got) != want {
				t.Errorf("echoed %q, %v; want %q", got, err, want)
			}
		})
	}
	wg.Wait()
	if st := tr.Stats(); st.Buffered != int64(len(firsts)) || st.BudgetBytes != transport.DefaultTotalBytes || st.RetryLaterWritten != 2 {
		t.Errorf("Buffered %d, BudgetBytes %d, RetryLaterWritten %d; want %d, the default total, 2",
			st.Buffered, st.BudgetBytes, st.RetryLaterWritten, len(firsts))
	}
	if got, want := tr.Config(), transport.New(nil, transport.DefaultConfig()).Config(); got != want {
		t.Errorf("Config() = %+v, want New's default %+v", got, want)
	}
	if got := tr.WrappedRoundTripper(); got != http.DefaultTransport {
		t.Errorf("WrappedRoundTripper() = %v, want http.DefaultTransport", got)
	}
	drain(t, &tr)
}
