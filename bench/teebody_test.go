package bench

import (
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/teebody"
	"github.com/teebody/teebody/pkg/transport"
)

// kinds are the transports every benchmark compares, in the order they run.
var kinds = rotate([]string{kindPlain, kindTeebody, kindReadAll}, os.Getenv("BENCH_ROUND"))

// rotate turns the order by the round number, so that over the rounds of
// run.sh every transport runs first, second and third equally often (the
// first benchmark of a process, and the one after a heavy one, pay for
// what came before).
func rotate(ks []string, round string) []string {
	r, err := strconv.Atoi(round)
	if err != nil || r <= 0 {
		return ks
	}
	r %= len(ks)
	return append(ks[r:], ks[:r]...)
}

// newTeebody wraps inner in transport.New with a budget of its own, so that
// the harness can read Budget.Peak. Zero sizes in cfg mean the defaults;
// cfg.adaptive sets Config.Adaptive.
func newTeebody(cfg stackConfig, inner *http.Transport) (underTest, error) {
	c := transport.DefaultConfig()
	total := int64(transport.DefaultTotalBytes)
	if cfg.totalBytes > 0 {
		total = cfg.totalBytes
	}
	if cfg.perRequest > 0 {
		c.PerRequestBytes = cfg.perRequest
	}
	c.Budget = teebody.NewBudget(total)
	c.Adaptive = cfg.adaptive
	c.ErrorLog = proxytest.QuietLog()
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
