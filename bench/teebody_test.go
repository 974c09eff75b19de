package bench

import (
	"fmt"
	"net/http"

	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// kinds are the transports every benchmark compares.
var kinds = []string{kindPlain, kindTeebody, kindReadAll}

// newTeebody wraps inner in transport.New with a budget of its own, so that
// the harness can read Budget.Peak. Zero sizes in cfg mean the defaults.
func newTeebody(cfg stackConfig, inner *http.Transport) (underTest, error) {
	c := transport.DefaultConfig()
	if cfg.totalBytes > 0 {
		c.TotalBytes = cfg.totalBytes
	}
	if cfg.perRequest > 0 {
		c.PerRequestBytes = cfg.perRequest
	}
	c.Budget = teebody.NewBudget(c.TotalBytes)
	c.ErrorLog = discardLog
	t := transport.New(inner, c)
	return underTest{
		rt:           t,
		held:         c.Budget.InUse,
		peak:         c.Budget.Peak,
		total:        c.Budget.Total(),
		errorHandler: t.ErrorHandler,
		drain:        t.Drain,
		stats:        func() string { return fmt.Sprintf("%+v", t.Stats()) },
	}, nil
}
