package teebodycaddy

import (
	"cmp"
	"fmt"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"

	"github.com/teebody/teebody/pkg/transport"
)

func init() {
	caddy.RegisterModule(Transport{})
}

// Transport is the Caddy module http.reverse_proxy.transport.teebody:
// Caddy's HTTP transport with replayable request bodies (see the package
// documentation). Its JSON object holds every field of
// reverseproxy.HTTPTransport, which it embeds, and the settings below.
//
// A setting that is absent takes the library's default
// (transport.DefaultConfig), or, if EnvPrefix is set, its value from the
// environment. A setting that is present takes the place of its variable.
//
// Caddy provisions a Transport once per config load; after Provision, its
// RoundTrip is safe for concurrent use, as Caddy requires. It is not usable
// before Provision, nor after Cleanup.
type Transport struct {
	// Caddy's HTTP transport, which sends the requests: every `transport
	// http` option (TLS, h2c, HTTP/3, timeouts, keep-alive, ...) applies.
	reverseproxy.HTTPTransport

	// Total bounds the bytes held for replay by all the requests of this
	// transport together (transport.Config.TotalBytes), as a size:
	// "500MiB", "1G", "524288000". Each reverse_proxy's transport has a
	// budget of its own. "0" or less disables buffering. Default: 500MiB.
	Total string `json:"total,omitempty"`

	// PerRequest bounds the bytes held for the replay of one request body
	// (transport.Config.PerRequestBytes), as a size; it is capped at Total.
	// A longer body streams on and loses only its replay. "0" or less
	// disables buffering. Default: 50MiB.
	PerRequest string `json:"per_request,omitempty"`

	// Adaptive buffers a body only when its upstream sent a GOAWAY lately,
	// and small bodies always (transport.Config.Adaptive). Default: false.
	Adaptive *bool `json:"adaptive,omitempty"`

	// AdaptiveFloor is, in adaptive mode, what is kept of a body for an
	// upstream that sent no GOAWAY lately (transport.Config.AdaptiveFloorBytes),
	// as a size. "0" or less keeps nothing. Default: 64KiB.
	AdaptiveFloor string `json:"adaptive_floor,omitempty"`

	// EnvPrefix, if set, makes the settings above that are absent take
	// their values from the environment variables that begin with it, as
	// transport.ConfigFromEnvPrefix reads them: TOTAL, PER_REQ, ADAPTIVE
	// and ADAPTIVE_FLOOR. A setting that is present takes the place of its
	// variable: with TOTAL=0, which disables buffering, total 100MiB
	// buffers, unless PER_REQ disables it too. Teleport's names begin with
	// transport.EnvPrefix. Default: none; the environment is not read.
	EnvPrefix string `json:"env_prefix,omitempty"`

	// RetryAfter is the delay announced by the Retry-After header of a 429
	// (transport.Config.RetryAfter), rounded up to whole seconds. Zero
	// means the default, one second; negative is an error.
	RetryAfter caddy.Duration `json:"retry_after,omitempty"`

	// OnRefused says how a request is answered when its upstream refused it
	// and its body could not be sent again (transport.ShouldRetryLater):
	//
	//   - "respond" (the default): the transport answers 429 Too Many
	//     Requests with Retry-After itself, as
	//     transport.Transport.ErrorHandler does. Caddy forwards it as the
	//     upstream's response: handle_response sees it, handle_errors does
	//     not.
	//   - "status": as "respond", with a Kubernetes Status body, as
	//     transport.Transport.Responder does: for the Kubernetes API.
	//   - "error": RoundTrip returns a caddyhttp.HandlerError of status 429,
	//     which handle_errors routes see ({err.status_code} is 429). Without
	//     them, Caddy answers a bare 429. The Retry-After value in seconds is
	//     in the placeholder {teebody.retry_after}, for a handle_errors route.
	//
	// Either way it is never a 502, and it is counted in
	// teebody_error_responses_total{code="429"}.
	OnRefused string `json:"on_refused,omitempty"`

	// Name is the value of the label transport="..." on this transport's
	// metrics. Two transports of one config must not share a name. Default:
	// "0" for the first unnamed transport provisioned, "1" for the next,
	// and so on, in the order of the config; name them to keep the series
	// stable when the config changes.
	Name string `json:"name,omitempty"`

	tr         *transport.Transport                            // built by Provision
	answer     func(http.ResponseWriter, *http.Request, error) // answers a refused request; nil if OnRefused is "error"
	unregister func() bool                                     // takes the collector off Caddy's registry
}

// CaddyModule returns the Caddy module information.
func (Transport) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.reverse_proxy.transport.teebody",
		New: func() caddy.Module { return new(Transport) },
	}
}

// Provision provisions the embedded HTTP transport, reads the settings (an
// error names the one that is malformed), builds the library's transport
// around it and registers its metrics in Caddy's registry. On failure
// nothing is left registered.
func (t *Transport) Provision(ctx caddy.Context) error {
	cfg, err := t.config()
	if err != nil {
		return err
	}
	if err := t.HTTPTransport.Provision(ctx); err != nil {
		return err
	}
	t.tr = transport.New(&t.HTTPTransport, cfg)
	switch t.OnRefused {
	case "", onRefusedRespond:
		t.answer = t.tr.ErrorHandler
	case onRefusedStatus:
		t.answer = t.tr.Responder().Error
	}
	if err := t.registerMetrics(ctx); err != nil {
		return err
	}
	applied := t.tr.Config()
	ctx.Logger().Info("replayable request bodies",
		zap.String("name", t.Name),
		zap.Int64("total", t.tr.Stats().BudgetBytes),
		zap.Int64("per_request", applied.PerRequestBytes),
		zap.Bool("adaptive", applied.Adaptive),
		zap.Int64("adaptive_floor", applied.AdaptiveFloorBytes),
		zap.Duration("retry_after", applied.RetryAfter),
		zap.String("on_refused", cmp.Or(t.OnRefused, onRefusedRespond)))
	return nil
}

// Cleanup takes the metrics off Caddy's registry and closes the idle
// connections of the HTTP transport. It does not wait for bodies: Caddy
// cleans a config up after its servers have finished their requests, and a
// body's memory goes back when its request ends.
func (t *Transport) Cleanup() error {
	if t.unregister != nil {
		t.unregister()
		t.unregister = nil
	}
	return t.HTTPTransport.Cleanup()
}

// Stats returns the library transport's counters (transport.Transport.Stats).
// It is safe for concurrent use after Provision.
func (t *Transport) Stats() transport.Stats { return t.tr.Stats() }

// RoundTrip implements http.RoundTripper: it sends req through the library's
// transport, over the HTTP transport, with a replayable body.
//
// Caddy's reverse_proxy hands every attempt of one request (lb_retries) the
// same body. An attempt after one that has read some of it cannot send it
// whole, so it is not sent. It fails at once with that attempt's answer
// (the 429 below, or its error), or with an error when that attempt got a
// response. Attempts after ones that read nothing (dial errors) send it as
// the first would.
//
// When the upstream refused the request and its body could not be sent
// again, RoundTrip answers 429 with Retry-After, as OnRefused says. Every
// other error is returned as the HTTP transport returned it.
//
// Before it returns, RoundTrip sets the placeholders of what the library did
// with the body (AttemptsPlaceholder and the ones beside it) on the
// request's replacer.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The library tells upstreams apart by scheme and host (adaptive mode):
	// set the scheme as the HTTP transport will.
	t.HTTPTransport.SetScheme(req)
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return t.send(req, req.Body) // nothing to keep: the library counts it and hands it on
	}
	st := bodyOf(req)
	a, ok := st.next()
	if !ok {
		return t.again(req, st)
	}
	resp, err := t.send(req, a)
	if err != nil {
		a.finish()
		if st.started.Load() {
			st.failure = err
		}
		return t.refused(req, err)
	}
	return resp, nil
}

// send sends a shallow copy of req with body through the library's transport
// (Caddy's request stays as it was) and sets the placeholders of its Report
// on Caddy's replacer, if req has one, before it returns. The response's
// Request is req.
func (t *Transport) send(req *http.Request, body io.ReadCloser) (*http.Response, error) {
	var report transport.Report
	ctx := req.Context()
	repl := replacerOf(ctx)
	if repl != nil {
		ctx = transport.WithReport(ctx, &report)
	}
	out := req.WithContext(ctx)
	out.Body = body
	resp, err := t.tr.RoundTrip(out)
	if repl != nil {
		publishReport(repl, &report)
	}
	if err != nil {
		return nil, err
	}
	resp.Request = req
	return resp, nil
}

// again answers an attempt whose body an earlier attempt has read: as that
// attempt's error was answered, or with errSpent if it got a response.
func (t *Transport) again(req *http.Request, st *bodyState) (*http.Response, error) {
	if st.failure == nil {
		return nil, errSpent
	}
	return t.refused(req, st.failure)
}

// UnmarshalCaddyfile sets up the transport from Caddyfile tokens:
//
//	transport teebody {
//		total          <size>
//		per_request    <size>
//		adaptive       [<bool>]
//		adaptive_floor <size>
//		retry_after    <duration>
//		on_refused     respond|status|error
//		name           <name>
//		<any subdirective of transport http>
//	}
//
// A malformed value is an error naming the subdirective and its line.
func (t *Transport) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return t.unmarshalCaddyfile(d)
}

// errSpent fails an attempt whose body an earlier attempt read and which
// got a response (Caddy retries after a response only when retry_match
// tests it).
var errSpent = fmt.Errorf("teebody: the request body was read by an earlier attempt, which got a response")

// Interface guards: what Caddy's reverse_proxy looks for in a transport, and
// what the embedded HTTP transport gives it.
var (
	_ caddy.Module                                     = (*Transport)(nil)
	_ caddy.Provisioner                                = (*Transport)(nil)
	_ caddy.CleanerUpper                               = (*Transport)(nil)
	_ caddyfile.Unmarshaler                            = (*Transport)(nil)
	_ http.RoundTripper                                = (*Transport)(nil)
	_ reverseproxy.TLSTransport                        = (*Transport)(nil)
	_ reverseproxy.H2CTransport                        = (*Transport)(nil)
	_ reverseproxy.HealthCheckSchemeOverriderTransport = (*Transport)(nil)
	_ reverseproxy.ProxyProtocolTransport              = (*Transport)(nil)
	_ reverseproxy.RequestHeaderOpsTransport           = (*Transport)(nil)
)
