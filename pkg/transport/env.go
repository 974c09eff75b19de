package transport

import (
	"fmt"
	"os"
	"strings"
)

// ConfigFromEnv returns DefaultConfig overridden by the environment:
// EnvTotalBytes sets TotalBytes and EnvPerRequestBytes sets PerRequestBytes,
// each in the forms ParseSize accepts. A variable that is unset or empty (or
// only spaces) keeps the default. A value <= 0 disables buffering. The
// returned PerRequestBytes is already capped at TotalBytes, as New would cap
// it, so that what a caller logs is what applies.
//
// A malformed value is an error that names the variable and quotes its
// value (for example `TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_TOTAL: transport:
// invalid size "12XB": unknown unit "XB"`), wrapping ErrInvalidSize; the Config returned with it is the zero
// Config (buffering disabled), never a silent default.
func ConfigFromEnv() (Config, error) {
	cfg := DefaultConfig()
	for _, v := range []struct {
		name string
		dst  *int64
	}{
		{EnvTotalBytes, &cfg.TotalBytes},
		{EnvPerRequestBytes, &cfg.PerRequestBytes},
	} {
		s, ok := os.LookupEnv(v.name)
		if !ok || strings.TrimSpace(s) == "" {
			continue
		}
		n, err := ParseSize(s)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", v.name, err)
		}
		*v.dst = n
	}
	if cfg.TotalBytes > 0 {
		cfg.PerRequestBytes = min(cfg.PerRequestBytes, cfg.TotalBytes)
	}
	return cfg, nil
}
