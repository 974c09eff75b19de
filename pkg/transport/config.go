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

// Config configures a Transport. The zero Config disables buffering: every
// request passes through untouched. Start from DefaultConfig or
// ConfigFromEnv.
//
// The most held for request bodies is TotalBytes (or Budget's total) plus up
// to 64 KiB per body in flight: the chunk a body reads into.
type Config struct {
	// TotalBytes bounds the bytes held for replay by all requests together.
	// <= 0 disables buffering. When Budget is set, its total is the bound,
	// but TotalBytes <= 0 still disables buffering.
	TotalBytes int64

	// PerRequestBytes bounds the bytes held for the replay of one request.
	// A longer body streams on and loses only its replay. <= 0 disables
	// buffering. New caps it at TotalBytes, and at Budget's total if set.
	PerRequestBytes int64

	// RetryAfter is the delay that ErrorHandler's 429 announces in
	// Retry-After, rounded up to whole seconds, and its gRPC answer in
	// grpc-retry-pushback-ms. <= 0 means DefaultRetryAfter.
	RetryAfter time.Duration

	// Budget, when set, is the byte budget charged for what is held, and
	// may be shared. nil: New makes a budget of TotalBytes, and Wrap one for
	// all the Transports it returns.
	Budget *teebody.Budget

	// Adaptive buffers bodies in full only for upstreams that sent GOAWAY
	// lately. An upstream is the scheme and host of the outgoing URL. A
	// trace of GOAWAY is a request that failed with an error for which
	// ShouldRetryLater is true, or a replay served. A trace keeps its
	// upstream buffered for AdaptiveWindow.
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
	// upstream without a trace (see Adaptive). New caps it at the
	// per-request limit. <= 0 turns the floor off: every body to such an
	// upstream passes through. Upstreams with a trace are not affected.
	AdaptiveFloorBytes int64

	// ErrorLog receives the errors that ErrorHandler answers with 502, as
	// httputil.ReverseProxy.ErrorLog does. nil: the log package's standard
	// logger.
	ErrorLog *log.Logger
}

// DefaultConfig returns a Config of the Default values, with adaptive mode
// off.
func DefaultConfig() Config {
	return Config{
		TotalBytes:         DefaultTotalBytes,
		PerRequestBytes:    DefaultPerRequestBytes,
		RetryAfter:         DefaultRetryAfter,
		AdaptiveFloorBytes: DefaultAdaptiveFloorBytes,
	}
}

// enabled reports whether c buffers anything at all.
func (c Config) enabled() bool {
	return c.TotalBytes > 0 && c.PerRequestBytes > 0 && (c.Budget == nil || c.Budget.Total() > 0)
}

// applied returns c as New applies it, which Transport.Config reports:
//   - PerRequestBytes capped at the bytes the budget can ever hold, since a
//     body that could never be held whole is not worth holding in part;
//   - AdaptiveFloorBytes capped at PerRequestBytes, so that adaptive mode
//     passes through a quiet body it could not hold whole;
//   - the default in place of a RetryAfter or AdaptiveWindow <= 0.
func (c Config) applied() Config {
	c.PerRequestBytes = min(c.PerRequestBytes, c.TotalBytes)
	if c.Budget != nil {
		c.PerRequestBytes = min(c.PerRequestBytes, c.Budget.Total())
	}
	c.AdaptiveFloorBytes = min(c.AdaptiveFloorBytes, c.PerRequestBytes)
	if c.RetryAfter <= 0 {
		c.RetryAfter = DefaultRetryAfter
	}
	if c.AdaptiveWindow <= 0 {
		c.AdaptiveWindow = DefaultAdaptiveWindow
	}
	return c
}

// Config returns the Config that t applies: the one given to New, with its
// limits capped and its defaults filled in as Config's fields say.
func (t *Transport) Config() Config { return t.cfg }
