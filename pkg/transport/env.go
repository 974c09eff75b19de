package transport

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// errInvalidBool is wrapped by the error ConfigFromEnv returns for a
// malformed EnvAdaptive. Unexported: every error of ConfigFromEnv is a
// malformed value, which its text names; there is nothing to tell apart.
var errInvalidBool = errors.New("transport: invalid boolean")

// ConfigFromEnv returns DefaultConfig overridden by the environment:
// EnvTotalBytes sets TotalBytes, EnvPerRequestBytes sets PerRequestBytes and
// EnvAdaptiveFloorBytes sets AdaptiveFloorBytes, each in the forms ParseSize
// accepts, and EnvAdaptive sets Adaptive, in the forms strconv.ParseBool
// accepts ("1", "t", "true", "TRUE", "0", "f", "false", ...). A variable that
// is unset or empty (or only spaces) keeps the default. Each value means what
// its Config field says: a TotalBytes or PerRequestBytes <= 0 disables
// buffering, an AdaptiveFloorBytes <= 0 only turns the floor off. The
// returned PerRequestBytes is already capped at TotalBytes, as New would cap
// it, so that what a caller logs is what applies.
//
// A malformed value is an error that names the variable and quotes its
// value (for example `TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_TOTAL: transport:
// invalid size "12XB": unknown unit "XB"`; a size's error wraps
// ErrInvalidSize); the Config returned with it is the zero Config (buffering
// disabled), never a silent default.
func ConfigFromEnv() (Config, error) {
	cfg := DefaultConfig()
	for _, v := range []struct {
		name string
		dst  *int64
	}{
		{EnvTotalBytes, &cfg.TotalBytes},
		{EnvPerRequestBytes, &cfg.PerRequestBytes},
		{EnvAdaptiveFloorBytes, &cfg.AdaptiveFloorBytes},
	} {
		s, ok := lookupEnv(v.name)
		if !ok {
			continue
		}
		n, err := ParseSize(s)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", v.name, err)
		}
		*v.dst = n
	}
	if s, ok := lookupEnv(EnvAdaptive); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w %q: want true or false", EnvAdaptive, errInvalidBool, s)
		}
		cfg.Adaptive = b
	}
	if cfg.TotalBytes > 0 {
		cfg.PerRequestBytes = min(cfg.PerRequestBytes, cfg.TotalBytes)
	}
	return cfg, nil
}

// lookupEnv returns the value of the variable name, and whether it is set
// to something other than spaces.
func lookupEnv(name string) (string, bool) {
	s, ok := os.LookupEnv(name)
	return s, ok && strings.TrimSpace(s) != ""
}
