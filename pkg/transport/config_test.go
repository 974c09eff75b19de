package transport_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// TestZeroConfigBuffers: the zero Config is the default one, which keeps a
// body for its replay.
func TestZeroConfigBuffers(t *testing.T) {
	inner := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	})
	tr := transport.New(inner, transport.Config{})
	req, err := http.NewRequest(http.MethodPost, "http://upstream.invalid/", io.NopCloser(strings.NewReader("write")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if st := tr.Stats(); st.Buffered != 1 || st.BudgetBytes != transport.DefaultTotalBytes {
		t.Errorf("Buffered %d, BudgetBytes %d; want 1 and the default total", st.Buffered, st.BudgetBytes)
	}
}

// TestConfigBudgetOrTotal: one field decides the total, so New panics
// when a Config sets both.
func TestConfigBudgetOrTotal(t *testing.T) {
	defer func() {
		if got := recover(); got != "transport: Config sets both Budget and TotalBytes" {
			t.Errorf("recovered %v, want the package's panic", got)
		}
	}()
	transport.New(nil, transport.Config{TotalBytes: 1 << 20, Budget: teebody.NewBudget(1 << 20)})
}
