package transport_test

import (
	"net/http"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// TestStatsBudgetBytes: Stats.BudgetBytes is the size of the budget the
// Transport charges: its own of TotalBytes, the shared one's Total when
// Config.Budget is set, the one of the Transport a wrapped one came from, and 0 when buffering is disabled.
func TestStatsBudgetBytes(t *testing.T) {
	with := func(edit func(*transport.Config)) transport.Config {
		cfg := quietConfig()
		edit(&cfg)
		return cfg
	}
	shared := teebody.NewBudget(3 << 20)
	for _, tc := range []struct {
		name string
		tr   *transport.Transport
		want int64
	}{
		{"default", transport.New(nil, quietConfig()), transport.DefaultTotalBytes},
		{"total bytes", transport.New(nil, with(func(c *transport.Config) { c.TotalBytes = 1 << 20 })), 1 << 20},
		{"shared budget", transport.New(nil, with(func(c *transport.Config) {
			c.Budget = shared
		})), 3 << 20},
		{"wrap", transport.New(nil, with(func(c *transport.Config) {
			c.TotalBytes = 2 << 20
		})).Wrap(http.DefaultTransport).(*transport.Transport), 2 << 20},
		{"zero config", transport.New(nil, transport.Config{}), transport.DefaultTotalBytes},
		{"disabled", transport.New(nil, with(func(c *transport.Config) { c.Disabled = true })), 0},
		{"negative total", transport.New(nil, with(func(c *transport.Config) { c.TotalBytes = -1 })), 0},
		{"negative per request", transport.New(nil, with(func(c *transport.Config) { c.PerRequestBytes = -1 })), 0},
		{"empty shared budget", transport.New(nil, with(func(c *transport.Config) {
			c.Budget = teebody.NewBudget(0)
		})), 0},
	} {
		if got := tc.tr.Stats().BudgetBytes; got != tc.want {
			t.Errorf("%s: BudgetBytes = %d, want %d", tc.name, got, tc.want)
		}
	}
}
