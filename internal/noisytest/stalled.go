package noisytest

import "github.com/teebody/teebody/pkg/transport"

// StalledConfig returns transport.DefaultConfig with the stalled scenario's
// budget: 50 MiB, 5 MiB per request.
func StalledConfig() transport.Config {
	cfg := transport.DefaultConfig()
	cfg.TotalBytes, cfg.PerRequestBytes = 50<<20, 5<<20
	return cfg
}

// StalledUploads returns the stalled scenario's uploads, cut from body:
// 12 that announce 5 MiB, send 4 MiB and stall. On StalledConfig's budget
// they spend it, and small writes go behind them.
func StalledUploads(body []byte) Uploads {
	return Uploads{N: 12, Length: 5 << 20, Sent: 4 << 20, Body: body}
}
