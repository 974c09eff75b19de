package transport_test

import (
	"cmp"
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

// TestConfigBudgetOverTotal: a Budget set on what ConfigFromEnv read
// decides the total over the environment's TOTAL, and Transport.Config
// reports the budget's total.
func TestConfigBudgetOverTotal(t *testing.T) {
	setEnv(t, envTotal, "1MiB")
	setEnv(t, envPerReq, "-")
	cfg, err := transport.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Budget = teebody.NewBudget(3 << 20)
	tr := transport.New(nil, cfg) // panicked while TOTAL was set
	if n := tr.Stats().BudgetBytes; n != 3<<20 {
		t.Errorf("Stats().BudgetBytes = %d, want the Budget's 3 MiB", n)
	}
	got := tr.Config()
	if got.TotalBytes != 3<<20 || got.PerRequestBytes != 3<<20 || got.Budget != cfg.Budget {
		t.Errorf("Config() = %+v, want the Budget and its total of 3 MiB, per request capped at it", got)
	}
	if n := transport.New(nil, got).Config().TotalBytes; n != 3<<20 {
		t.Errorf("New(nil, tr.Config()).Config().TotalBytes = %d, want the same 3 MiB", n)
	}
}

// TestConfigSharedBudgetFromEnv: docs/teleport.md's shared budget buffers
// with the default total when TOTAL is unset, and with TOTAL's when it is
// set.
func TestConfigSharedBudgetFromEnv(t *testing.T) {
	setEnv(t, envPerReq, "-")
	for _, tc := range []struct {
		env  string
		want int64
	}{{"-", transport.DefaultTotalBytes}, {"2MiB", 2 << 20}} {
		setEnv(t, envTotal, tc.env)
		retryConfig, err := transport.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		total := cmp.Or(retryConfig.TotalBytes, transport.DefaultTotalBytes) // 0: TOTAL is unset
		retryConfig.Budget = teebody.NewBudget(total)
		if n := transport.New(nil, retryConfig).Stats().BudgetBytes; n != tc.want {
			t.Errorf("TOTAL %q: Stats().BudgetBytes = %d, want %d", tc.env, n, tc.want)
		}
	}
}

// TestConfigReportsBudgetTotal: with a Budget, Transport.Config reports its
// total in TotalBytes, which Config's doc reads as it applies: a Budget of
// 0 holds nothing, reported as -1, not as 0, the default.
func TestConfigReportsBudgetTotal(t *testing.T) {
	for _, tc := range []struct {
		total           int64
		wantTotal, want int64 // want: PerRequestBytes and AdaptiveFloorBytes
	}{
		{5 << 20, 5 << 20, transport.DefaultAdaptiveFloorBytes},
		{1 << 10, 1 << 10, 1 << 10},
		{0, -1, -1},
	} {
		got := transport.New(nil, transport.Config{Budget: teebody.NewBudget(tc.total)}).Config()
		if got.TotalBytes != tc.wantTotal || got.AdaptiveFloorBytes != tc.want ||
			got.PerRequestBytes != min(tc.wantTotal, transport.DefaultPerRequestBytes) {
			t.Errorf("Budget of %d: Config() = %+v; want TotalBytes %d, PerRequestBytes capped at it, AdaptiveFloorBytes %d",
				tc.total, got, tc.wantTotal, tc.want)
		}
	}
}
