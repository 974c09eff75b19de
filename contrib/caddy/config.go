package teebodycaddy

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/teebody/teebody/pkg/transport"
)

// The values of Transport.OnRefused.
const (
	onRefusedRespond = "respond"
	onRefusedStatus  = "status"
	onRefusedError   = "error"
)

// checkOnRefused returns an error unless v is a value of Transport.OnRefused.
func checkOnRefused(v string) error {
	switch v {
	case onRefusedRespond, onRefusedStatus, onRefusedError:
		return nil
	}
	return fmt.Errorf("on_refused: %q is not %q, %q or %q", v, onRefusedRespond, onRefusedStatus, onRefusedError)
}

// config returns the library's Config for t's settings, over
// transport.ConfigFromEnvPrefix(t.EnvPrefix) if EnvPrefix is set. An
// error names the malformed setting (or variable) and carries one prefix:
// the library's for a variable, teebody's for a setting.
func (t *Transport) config() (cfg transport.Config, err error) {
	if t.EnvPrefix != "" {
		if cfg, err = transport.ConfigFromEnvPrefix(t.EnvPrefix); err != nil {
			return transport.Config{}, err
		}
		// A setting takes the place of its variable, and so of the Disabled
		// that the variable's size <= 0 set; the other's stays.
		cfg.Disabled = t.envOff("TOTAL", t.Total, cfg.TotalBytes) || t.envOff("PER_REQ", t.PerRequest, cfg.PerRequestBytes)
	}
	for _, s := range []struct {
		name, value string
		to          *int64
		off         *bool // set by a size <= 0; nil: the size is -1 then
	}{
		{"total", t.Total, &cfg.TotalBytes, &cfg.Disabled},
		{"per_request", t.PerRequest, &cfg.PerRequestBytes, &cfg.Disabled},
		{"adaptive_floor", t.AdaptiveFloor, &cfg.AdaptiveFloorBytes, nil},
	} {
		if s.value == "" {
			continue
		}
		n, err := parseSizeSetting(s.name, s.value)
		switch {
		case err != nil:
			return transport.Config{}, fmt.Errorf("teebody: %w", err)
		case n > 0:
			*s.to = n
		case s.off != nil:
			*s.off = true
		default:
			*s.to = -1
		}
	}
	if t.Adaptive != nil {
		cfg.Adaptive = *t.Adaptive
	}
	switch d := time.Duration(t.RetryAfter); {
	case d < 0:
		return transport.Config{}, fmt.Errorf("teebody: retry_after: %v is negative", d)
	case d > 0:
		cfg.RetryAfter = d
	}
	if t.OnRefused != "" {
		if err := checkOnRefused(t.OnRefused); err != nil {
			return transport.Config{}, fmt.Errorf("teebody: %w", err)
		}
	}
	return cfg, nil
}

// envOff reports whether the size variable suffix of t.EnvPrefix turned
// buffering off and no setting takes its place. setting is the setting's
// value, and read the size that transport.ConfigFromEnvPrefix read from the
// variable without an error: a variable that is set to something other than
// spaces leaves it 0 only when it is <= 0, which sets Disabled.
func (t *Transport) envOff(suffix, setting string, read int64) bool {
	v, ok := os.LookupEnv(t.EnvPrefix + suffix)
	return setting == "" && ok && strings.TrimSpace(v) != "" && read == 0
}

// parseSizeSetting parses value, the size setting name, with
// transport.ParseSize.
func parseSizeSetting(name, value string) (int64, error) {
	n, err := transport.ParseSize(value)
	if err != nil {
		return 0, &settingError{name, err}
	}
	return n, nil
}

// settingError is the library's error about the setting name. Its text
// names the setting in place of the library's prefix, so that the error
// carries one prefix however it is wrapped: `per_request: invalid size
// "12XB": unknown unit "XB": ...`. It unwraps to the library's error.
type settingError struct {
	name string
	err  error
}

func (e *settingError) Error() string {
	return e.name + ": " + strings.TrimPrefix(e.err.Error(), "transport: ")
}

func (e *settingError) Unwrap() error { return e.err }

// invalidBool is the error about a malformed boolean setting, in the words
// of transport.ConfigFromEnv's error about a malformed variable.
func invalidBool(name, value string) error {
	return fmt.Errorf("%s: invalid boolean %q: want true or false (1, t, T, TRUE, True, 0, f, F, FALSE, False)", name, value)
}
