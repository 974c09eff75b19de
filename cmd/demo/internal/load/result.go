package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/teebody/teebody/internal/quantile"
)

// ErrResult reports a result file that could not be written or read.
var ErrResult = errors.New("load: result file")

// maxSampleErrors is how many error texts a Result keeps.
const maxSampleErrors = 10

// Result is one load run, as saved to JSON and compared by "demo compare".
// Rates are percentages of TotalOperations; latencies are those of the
// successful operations (create and delete together), in milliseconds.
//
// GoawayErrors counts the failures for which transport.ShouldRetryLater
// holds, or that carry the text of one of Go's GOAWAY failures (through a
// proxy without the fix, the error arrives as the message of a 502's
// Status): a request the upstream refused, or whose resend failed, and that
// the client could not send again. In the embedded run only
// GOAWAYs end connections; against a real cluster a connection lost
// otherwise (a load balancer's reset) counts as well.
type Result struct {
	Name                 string    `json:"name"`
	Start                time.Time `json:"start"`
	End                  time.Time `json:"end"`
	DurationSeconds      float64   `json:"duration_seconds"`
	TotalOperations      int       `json:"total_operations"`
	SuccessfulOperations int       `json:"successful_operations"`
	FailedOperations     int       `json:"failed_operations"`
	GoawayErrors         int       `json:"goaway_errors"`
	ErrorRate            float64   `json:"error_rate"`
	GoawayRate           float64   `json:"goaway_rate"`
	Workers              int       `json:"workers"`
	OpsPerWorker         int       `json:"ops_per_worker"`
	BodySize             int       `json:"body_size"`
	NoRetry              bool      `json:"no_retry"`
	Context              string    `json:"context"`
	ServerVersion        string    `json:"server_version"`
	APIServerURL         string    `json:"api_server_url"`
	P50Ms                float64   `json:"p50_ms"`
	P95Ms                float64   `json:"p95_ms"`
	P99Ms                float64   `json:"p99_ms"`
	SampleErrors         []string  `json:"sample_errors"`
}

// Percent is part of whole in percent; 0 when whole is 0.
func Percent(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fill sets the counts, rates and percentiles from the latencies of the
// successful operations and the failure counts.
func (r *Result) fill(latencies []time.Duration, failed, goaway int) {
	slices.Sort(latencies)
	r.SuccessfulOperations = len(latencies)
	r.FailedOperations = failed
	r.GoawayErrors = goaway
	r.TotalOperations = len(latencies) + failed
	r.ErrorRate = Percent(failed, r.TotalOperations)
	r.GoawayRate = Percent(goaway, r.TotalOperations)
	r.P50Ms = ms(quantile.Of(latencies, 0.50))
	r.P95Ms = ms(quantile.Of(latencies, 0.95))
	r.P99Ms = ms(quantile.Of(latencies, 0.99))
	r.DurationSeconds = r.End.Sub(r.Start).Seconds()
	if r.SampleErrors == nil {
		r.SampleErrors = []string{}
	}
}

// WriteFile saves r as indented JSON.
func (r *Result) WriteFile(path string) error { return WriteJSON(path, r) }

// WriteJSON saves v as indented JSON; its error wraps ErrResult.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrResult, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("%w: %w", ErrResult, err)
	}
	return nil
}

// ReadFile loads a Result saved by WriteFile.
func ReadFile(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrResult, err)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrResult, path, err)
	}
	return &r, nil
}
