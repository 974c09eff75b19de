package teebodycaddy

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// unmarshalCaddyfile reads the subdirectives of teebody's own and hands the
// others, in their order and with their positions, to the embedded HTTP
// transport's UnmarshalCaddyfile, as one `http { ... }` block. It checks each
// value as Provision will, so that `caddy adapt` fails on a malformed one.
func (t *Transport) unmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the module's name
	head := d.Token()
	if d.NextArg() {
		return d.ArgErr()
	}
	var rest []caddyfile.Token // the subdirectives of transport http
	for d.NextBlock(0) {
		switch name := d.Val(); name {
		case "total", "per_request", "adaptive_floor":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			if _, err := parseSizeSetting(name, v); err != nil {
				return d.WrapErr(err)
			}
			switch name {
			case "total":
				t.Total = v
			case "per_request":
				t.PerRequest = v
			default:
				t.AdaptiveFloor = v
			}
		case "adaptive":
			on := true
			if d.NextArg() {
				b, err := strconv.ParseBool(d.Val())
				if err != nil {
					return d.WrapErr(invalidBool("adaptive", d.Val()))
				}
				on = b
				if d.NextArg() {
					return d.ArgErr()
				}
			}
			t.Adaptive = &on
		case "retry_after":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil {
				return d.Errf("retry_after: %v", err)
			}
			if dur < 0 {
				return d.Errf("retry_after: %v is negative", dur)
			}
			t.RetryAfter = caddy.Duration(dur)
		case "on_refused":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			if err := checkOnRefused(v); err != nil {
				return d.Err(err.Error())
			}
			t.OnRefused = v
		case "name":
			if !d.AllArgs(&t.Name) {
				return d.ArgErr()
			}
		case "env_prefix":
			if !d.AllArgs(&t.EnvPrefix) {
				return d.ArgErr()
			}
		default:
			rest = append(rest, d.NextSegment()...)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	// transport http { <rest> }: the braces on the lines that bound rest,
	// so that every token keeps its line for the errors.
	open := caddyfile.Token{File: head.File, Line: head.Line, Text: "{"}
	last := rest[len(rest)-1]
	closing := caddyfile.Token{File: last.File, Line: last.Line + 1, Text: "}"}
	toks := append([]caddyfile.Token{head, open}, rest...)
	toks = append(toks, closing)
	return t.HTTPTransport.UnmarshalCaddyfile(caddyfile.NewDispenser(toks))
}
