package transport_test

import (
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

// TestWithReportNil: WithReport rejects a nil Report at once, as
// WithBodyTrace rejects a nil trace, rather than RoundTrip later.
func TestWithReportNil(t *testing.T) {
	defer func() {
		if got := recover(); got != "transport: WithReport with a nil *Report" {
			t.Errorf("recovered %v, want the package's panic", got)
		}
	}()
	transport.WithReport(t.Context(), nil)
}
