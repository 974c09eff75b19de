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
	// DefaultRetryAfter is the Retry-After that ErrorHandler announces when
	// Config.RetryAfter is zero.
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
// to 64 KiB per body in flight. The 64 KiB is the chunk a body reads into,
// which the budget does not charge (see teebody.Budget).
type Config struct {
	// TotalBytes bounds the bytes held for replay by all requests together.
	// <= 0 disables buffering. When Budget is set, its total is the bound,
	// but TotalBytes <= 0 still disables buffering.
	TotalBytes int64

	// PerRequestBytes bounds the bytes held for the replay of one request.
	// A longer body streams on and loses only its replay. <= 0 disables
	// buffering. New caps it at TotalBytes, and at Budget's total if set.
	PerRequestBytes int64

	// RetryAfter is the delay announced in the Retry-After header of the 429
	// that ErrorHandler writes. It is rounded up to whole seconds, at least
	// one. <= 0 means DefaultRetryAfter.
	RetryAfter time.Duration

	// Budget, when set, is the byte budget charged for what is held. Other
	// Transports and Tees may share it. nil: New makes a budget of
	// TotalBytes for this Transport alone, and Wrap one for all the
	// Transports it returns.
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
	// (Stats.PassedThrough.Quiet). If a GOAWAY refuses it, it gets the 429.
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

// DefaultConfig returns the defaults: DefaultTotalBytes in all,
// DefaultPerRequestBytes per request, DefaultRetryAfter, and
// DefaultAdaptiveFloorBytes for adaptive mode (which is off).
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

// limited returns c with the limits New applies, which Transport.Config
// reports. PerRequestBytes is capped at the bytes the budget can ever hold:
// a body that could never be held whole is not worth holding in part.
// AdaptiveFloorBytes is capped at PerRequestBytes, so that adaptive mode
// passes through a quiet body it could not hold whole.
func (c Config) limited() Config {
	c.PerRequestBytes = min(c.PerRequestBytes, c.TotalBytes)
	if c.Budget != nil {
		c.PerRequestBytes = min(c.PerRequestBytes, c.Budget.Total())
	}
	c.AdaptiveFloorBytes = min(c.AdaptiveFloorBytes, c.PerRequestBytes)
	return c
}

// Config returns the Config that t applies: the one given to New, with
// PerRequestBytes and AdaptiveFloorBytes capped as their docs say.
func (t *Transport) Config() Config { return t.cfg }

func (c Config) adaptiveWindow() time.Duration {
	if c.AdaptiveWindow <= 0 {
		return DefaultAdaptiveWindow
	}
	return c.AdaptiveWindow
}

func (c Config) retryAfter() time.Duration {
	if c.RetryAfter <= 0 {
		return DefaultRetryAfter
	}
	return c.RetryAfter
}
