package transport

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// EnvPrefix is the prefix of the environment variables ConfigFromEnv reads:
// the names Teleport's Kubernetes proxy uses.
const EnvPrefix = "TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_"

// ConfigFromEnv is ConfigFromEnvPrefix(EnvPrefix).
func ConfigFromEnv() (Config, error) {
	return ConfigFromEnvPrefix(EnvPrefix)
}

// ConfigFromEnvPrefix returns DefaultConfig overridden by the environment.
// It reads the variables named prefix followed by:
//   - TOTAL, which sets TotalBytes (a Budget set on the result takes its
//     place); <= 0 sets Disabled;
//   - PER_REQ, which sets PerRequestBytes; <= 0 sets Disabled;
//   - ADAPTIVE, which sets Adaptive;
//   - ADAPTIVE_FLOOR, which sets AdaptiveFloorBytes; <= 0 turns the floor
//     off.
//
// Sizes take the forms of ParseSize. ADAPTIVE takes the forms of
// strconv.ParseBool: 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False.
// A variable that is unset, empty or only spaces keeps the default. Values
// are returned as read: New applies the caps, and Transport.Config reports
// them.
//
// The error names every malformed variable, one per line, and quotes its
// value. An error about a size matches ErrInvalidSize. With an error, the
// Config holds the default in place of each malformed variable, so that it
// never turns buffering off by mistake.
func ConfigFromEnvPrefix(prefix string) (Config, error) {
	var cfg Config
	r := envReader{prefix: prefix}
	r.limit("TOTAL", &cfg.TotalBytes, &cfg.Disabled)
	r.limit("PER_REQ", &cfg.PerRequestBytes, &cfg.Disabled)
	r.bool("ADAPTIVE", &cfg.Adaptive)
	var floorOff bool
	r.limit("ADAPTIVE_FLOOR", &cfg.AdaptiveFloorBytes, &floorOff)
	if floorOff {
		cfg.AdaptiveFloorBytes = -1
	}
	return cfg, errors.Join(r.errs...)
}

// envReader reads the variables of one prefix and collects their errors.
type envReader struct {
	prefix string
	errs   []error
}

// lookup returns the value of the variable prefix+suffix and its name, and
// whether it is set to something other than spaces.
func (r *envReader) lookup(suffix string) (value, name string, ok bool) {
	name = r.prefix + suffix
	value, ok = os.LookupEnv(name)
	return value, name, ok && strings.TrimSpace(value) != ""
}

// limit reads the size prefix+suffix into dst, or sets off if it is <= 0.
func (r *envReader) limit(suffix string, dst *int64, off *bool) {
	s, name, ok := r.lookup(suffix)
	if !ok {
		return
	}
	n, err := parseSize("transport: "+name+": ", s)
	switch {
	case err != nil:
		r.errs = append(r.errs, err)
	case n <= 0:
		*off = true
	default:
		*dst = n
	}
}

func (r *envReader) bool(suffix string, dst *bool) {
	s, name, ok := r.lookup(suffix)
	if !ok {
		return
	}
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("transport: %s: invalid boolean %q: want true or false "+
			"(1, t, T, TRUE, True, 0, f, F, FALSE, False)", name, s))
		return
	}
	*dst = b
}
