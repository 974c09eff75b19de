package transport

import (
	"log"
	"time"

	"github.com/teebody/teebody/pkg/teebody"
)

const (
	// DefaultTotalBytes is the default Config.TotalBytes: 500 MiB.
	DefaultTotalBytes = 500 << 20
	// DefaultPerRequestBytes is the default Config.PerRequestBytes: 50 MiB.
	DefaultPerRequestBytes = 50 << 20
	// DefaultRetryAfter is the default Config.RetryAfter: one second.
	DefaultRetryAfter = time.Second
	// DefaultAdaptiveWindow is the default Config.AdaptiveWindow: one hour.
	DefaultAdaptiveWindow = time.Hour
	// DefaultAdaptiveFloorBytes is the default Config.AdaptiveFloorBytes:
	// 64 KiB.
	DefaultAdaptiveFloorBytes = 64 << 10
)

// Config configures a Transport. A zero field means its default, so the
// zero Config is DefaultConfig. Set Disabled to turn buffering off.
//
// The most held for request bodies is the total plus up to 64 KiB per body
// in flight: the chunk a body reads into.
type Config struct {
	// Disabled turns buffering off: every request passes through untouched.
	Disabled bool

	// TotalBytes bounds the bytes held for replay by all requests together.
	// 0 means DefaultTotalBytes. A negative value holds nothing: buffering
	// is off. It is ignored when Budget is set.
	TotalBytes int64

	// Budget, when set, is the byte budget charged for what is held, and
	// may be shared; its total is the bound, in place of TotalBytes. nil:
	// New makes a budget of TotalBytes, which the Transports that Wrap
	// returns share.
	Budget *teebody.Budget

	// PerRequestBytes bounds the bytes held for the replay of one request.
	// A longer body streams on and loses only its replay. 0 means
	// DefaultPerRequestBytes. A negative value holds nothing: buffering is
	// off. New caps it at the total.
	PerRequestBytes int64

	// RetryAfter is the delay that ErrorHandler's 429 announces in
	// Retry-After, rounded up to whole seconds, and its gRPC answer in
	// grpc-retry-pushback-ms. <= 0 means DefaultRetryAfter.
	RetryAfter time.Duration

	// Adaptive buffers bodies in full only for upstreams that sent GOAWAY
	// lately. An upstream is the scheme and host of the outgoing URL. A
	// trace of GOAWAY is a request that failed with an error for which
	// ShouldRetryLater is true, a resend that failed reading the body its
	// first attempt closed, or a replay served. A trace keeps its upstream
	// buffered for AdaptiveWindow.
	//
	// For an upstream without a trace, a body that announces at most
	// AdaptiveFloorBytes, or no length, is kept up to that floor
	// (Stats.BufferedQuiet). A larger body passes through untouched
	// (Stats.PassedThrough.Quiet).
	// At most 4096 upstreams are remembered; the oldest trace goes first.
	Adaptive bool

	// AdaptiveWindow is how long a trace of GOAWAY keeps an upstream's
	// requests buffered in adaptive mode. <= 0 means DefaultAdaptiveWindow.
	AdaptiveWindow time.Duration

	// AdaptiveFloorBytes is what adaptive mode keeps of a body for an
	// upstream without a trace (see Adaptive). 0 means
	// DefaultAdaptiveFloorBytes. A negative value keeps nothing: every body
	// to such an upstream passes through. New caps it at the per-request
	// limit. Upstreams with a trace are not affected.
	AdaptiveFloorBytes int64

	// ErrorLog receives the errors that ErrorHandler answers with 502, as
	// httputil.ReverseProxy.ErrorLog does. nil: the log package's standard
	// logger.
	ErrorLog *log.Logger
}

// DefaultConfig returns the zero Config, whose fields all mean their
// defaults: a total of DefaultTotalBytes, DefaultPerRequestBytes per
// request, DefaultRetryAfter, and adaptive mode off.
func DefaultConfig() Config { return Config{} }

// enabled reports whether c, as applied, buffers anything at all.
func (c Config) enabled() bool {
	return !c.Disabled && c.TotalBytes > 0 && c.PerRequestBytes > 0
}

// applied returns c as New applies it, which Transport.Config reports:
//   - TotalBytes the bytes the budget can ever hold: Budget's total when
//     Budget is set, whatever TotalBytes said (a program that shares a
//     budget decides over a TOTAL of ConfigFromEnv's), with -1 for a total
//     of 0, which holds nothing rather than the default;
//   - the default in place of each other zero field, and of a RetryAfter or
//     AdaptiveWindow < 0;
//   - PerRequestBytes capped at TotalBytes, since a body that could never
//     be held whole is not worth holding in part;
//   - AdaptiveFloorBytes capped at PerRequestBytes, so that adaptive mode
//     passes through a quiet body it could not hold whole.
func (c Config) applied() Config {
	if c.Budget != nil {
		c.TotalBytes = c.Budget.Total()
		if c.TotalBytes == 0 {
			c.TotalBytes = -1
		}
	} else {
		c.TotalBytes = orDefault(c.TotalBytes, DefaultTotalBytes)
	}
	c.PerRequestBytes = min(orDefault(c.PerRequestBytes, DefaultPerRequestBytes), c.TotalBytes)
	c.AdaptiveFloorBytes = min(orDefault(c.AdaptiveFloorBytes, DefaultAdaptiveFloorBytes), c.PerRequestBytes)
	if c.RetryAfter <= 0 {
		c.RetryAfter = DefaultRetryAfter
	}
	if c.AdaptiveWindow <= 0 {
		c.AdaptiveWindow = DefaultAdaptiveWindow
	}
	return c
}

// orDefault returns n, or def if n is 0.
func orDefault(n, def int64) int64 {
	if n == 0 {
		return def
	}
	return n
}

// Config returns the Config that t applies: the one given to New, with its
// limits capped and its defaults filled in as Config's fields say. With a
// Budget, TotalBytes is the budget's total, or -1 if it is 0.
func (t *Transport) Config() Config {
	t.initZero()
	return t.cfg
}
