package teebodycaddy

import (
	"fmt"
	"time"

	"github.com/teebody/teebody/pkg/transport"
)

// The values of Transport.OnRefused.
const (
	onRefusedRespond = "respond"
	onRefusedError   = "error"
)

// config returns the library's Config for t's settings over
// transport.ConfigFromEnv, and whether a refused request is answered by a
// response (OnRefused). An error names the malformed setting (or variable).
func (t *Transport) config() (cfg transport.Config, respond bool, err error) {
	cfg, err = transport.ConfigFromEnv()
	if err != nil {
		return transport.Config{}, false, fmt.Errorf("teebody: %w", err)
	}
	for _, s := range []struct {
		name, value string
		to          *int64
	}{
		{"total", t.Total, &cfg.TotalBytes},
		{"per_request", t.PerRequest, &cfg.PerRequestBytes},
		{"adaptive_floor", t.AdaptiveFloor, &cfg.AdaptiveFloorBytes},
	} {
		if s.value == "" {
			continue
		}
		n, err := transport.ParseSize(s.value)
		if err != nil {
			return transport.Config{}, false, fmt.Errorf("teebody: %s: %w", s.name, err)
		}
		*s.to = n
	}
	if t.Adaptive != nil {
		cfg.Adaptive = *t.Adaptive
	}
	switch d := time.Duration(t.RetryAfter); {
	case d < 0:
		return transport.Config{}, false, fmt.Errorf("teebody: retry_after: %v is negative", d)
	case d > 0:
		cfg.RetryAfter = d
	}
	switch t.OnRefused {
	case "", onRefusedRespond:
		respond = true
	case onRefusedError:
	default:
		return transport.Config{}, false, fmt.Errorf("teebody: on_refused: %q is neither %q nor %q",
			t.OnRefused, onRefusedRespond, onRefusedError)
	}
	return cfg, respond, nil
}
