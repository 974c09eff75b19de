package transport

import (
	"log"
	"time"

	"github.com/teebody/teebody/pkg/teebody"
)

const (
	// EnvTotalBytes names the environment variable that overrides
	// Config.TotalBytes in ConfigFromEnv.
	EnvTotalBytes = "TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_TOTAL"
	// EnvPerRequestBytes names the environment variable that overrides
	// Config.PerRequestBytes in ConfigFromEnv.
	EnvPerRequestBytes = "TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_PER_REQ"
	// EnvAdaptive names the environment variable that sets Config.Adaptive
	// in ConfigFromEnv.
	EnvAdaptive = "TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_ADAPTIVE"
	// EnvAdaptiveFloorBytes names the environment variable that overrides
	// Config.AdaptiveFloorBytes in ConfigFromEnv.
	EnvAdaptiveFloorBytes = "TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_ADAPTIVE_FLOOR"
)

const (
	// DefaultTotalBytes is the default bound on the bytes held for replay by
	// all requests of one Transport (or of all Transports made by one Wrap).
	DefaultTotalBytes = 500 << 20
	// DefaultPerRequestBytes is the default bound on the bytes held for the
	// replay of one request body; a longer body streams through and loses
	// only its replay.
	DefaultPerRequestBytes = 50 << 20
	// DefaultRetryAfter is the Retry-After that ErrorHandler announces when
	// Config.RetryAfter is zero.
	DefaultRetryAfter = time.Second
	// DefaultAdaptiveWindow is how long adaptive mode keeps buffering for
	// an upstream after its latest trace of GOAWAY, when
	// Config.AdaptiveWindow is zero.
	DefaultAdaptiveWindow = time.Hour
	// DefaultAdaptiveFloorBytes is how much of a body adaptive mode keeps
	// for an upstream without a trace of GOAWAY: 64 KiB, more than typical
	// Kubernetes writes, as linkerd caps every body it keeps.
	DefaultAdaptiveFloorBytes = 64 << 10
)

// Config configures a Transport. The zero Config disables buffering: every
// request passes through untouched. Start from DefaultConfig or
// ConfigFromEnv.
type Config struct {
	// TotalBytes bounds the bytes held for replay by all requests together.
	// <= 0 disables buffering: every request passes through untouched.
	// Ignored for the bound when Budget is set, but still <= 0 disables.
	TotalBytes int64

	// PerRequestBytes bounds the bytes held for the replay of one request.
	// <= 0 disables buffering. It is capped at TotalBytes (and at
	// Budget.Total when Budget is set): a body that could never be held
	// whole is not worth holding in part.
	PerRequestBytes int64

	// RetryAfter is the delay announced in the Retry-After header of the 429
	// that ErrorHandler writes. It is rounded up to whole seconds, at least
	// one. <= 0 means DefaultRetryAfter.
	RetryAfter time.Duration

	// Budget, when set, is the byte budget charged for what is held, shared
	// with whoever else holds it (other Transports, other Tees). nil: New
	// makes a budget of TotalBytes for this Transport alone (Wrap makes one
	// for all the Transports it returns).
	Budget *teebody.Budget

	// Adaptive buffers a request in full only if its upstream (scheme and
	// host of the outgoing URL) left a trace of GOAWAY within
	// AdaptiveWindow. A trace is a request that failed with an error for
	// which ShouldRetryLater is true (ErrorHandler answers it 429), or a
	// replay served; one GOAWAY may leave several, and each renews the
	// window. For an upstream without a trace (a quiet one), a body that
	// announces at most AdaptiveFloorBytes, or no length, is still kept, with
	// that floor as its limit (Stats.BufferedQuiet), so that the upstream's
	// first GOAWAY costs small writes nothing and their replays are its
	// trace; a body that announces more passes through untouched and holds
	// nothing (Stats.PassedThrough.Quiet), and if a GOAWAY refuses it, it
	// gets the 429. So a quiet upstream costs at most the floor per request
	// in flight, and its first GOAWAY costs the larger requests in flight on
	// that connection a 429 each; from then on its requests are buffered as
	// without adaptive mode. At most 4096 upstreams are remembered, the one
	// with the oldest trace forgotten first (Stats.AdaptiveUpstreams);
	// forgetting one costs those 429s again. Budget, limits, Stats, Drain and
	// ErrorHandler are unchanged.
	Adaptive bool

	// AdaptiveWindow is how long a trace of GOAWAY keeps an upstream's
	// requests buffered in adaptive mode. <= 0 means DefaultAdaptiveWindow.
	AdaptiveWindow time.Duration

	// AdaptiveFloorBytes is what adaptive mode keeps of a body for an
	// upstream without a trace (see Adaptive): a body that announces at most
	// this much, or announces nothing, is buffered with this as its limit
	// (and within PerRequestBytes); a body that announces more passes
	// through. <= 0 turns the floor off: every request to a quiet upstream
	// then passes through (it does not disable buffering for upstreams with
	// a trace). DefaultConfig sets DefaultAdaptiveFloorBytes.
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

// perRequestLimit is PerRequestBytes capped at the bytes the budget can ever
// hold.
func (c Config) perRequestLimit() int64 {
	limit := min(c.PerRequestBytes, c.TotalBytes)
	if c.Budget != nil {
		limit = min(limit, c.Budget.Total())
	}
	return limit
}

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
