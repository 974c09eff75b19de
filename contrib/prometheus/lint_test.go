package prometheus_test

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	teebodyprom "github.com/teebody/teebody/contrib/prometheus"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

// lint is testutil.GatherAndLint over g, plus two conventions of
// Prometheus' naming guide that promlint does not check: unitLast and
// statusInLabel.
func lint(g prometheus.Gatherer) ([]promlint.Problem, error) {
	problems, err := testutil.GatherAndLint(g)
	if err != nil {
		return nil, err
	}
	families, err := g.Gather()
	if err != nil {
		return nil, err
	}
	for _, mf := range families {
		for _, rule := range []promlint.Validation{unitLast, statusInLabel} {
			for _, err := range rule(mf) {
				problems = append(problems, promlint.Problem{Metric: mf.GetName(), Text: err.Error()})
			}
		}
	}
	return problems, nil
}

// baseUnits are promlint's base units: a name that holds one ends with it.
var baseUnits = []string{"amperes", "bytes", "celsius", "grams", "joules", "kelvin", "meters", "metres", "seconds", "volts"}

// unitLast: the unit is the name's last word, before _total on a counter
// ("teebody_held_bytes", not "teebody_bytes_held").
func unitLast(mf *dto.MetricFamily) []error {
	name := strings.TrimSuffix(mf.GetName(), "_total")
	words := strings.Split(name, "_")
	for _, w := range words[:len(words)-1] {
		if slices.Contains(baseUnits, w) {
			return []error{fmt.Errorf("the unit %q should end the name", w)}
		}
	}
	return nil
}

// nonWord matches what separates the words of an HTTP status text.
var nonWord = regexp.MustCompile(`[^a-z]+`)

// statusInLabel: an HTTP error status is a label value (code="502") of one
// metric, not a word of several metrics' names ("bad_gateway_written_total").
func statusInLabel(mf *dto.MetricFamily) []error {
	name := "_" + mf.GetName() + "_"
	for code := 400; code < 600; code++ {
		text := nonWord.ReplaceAllString(strings.ToLower(http.StatusText(code)), "_")
		if strings.Contains(name, "_"+strconv.Itoa(code)+"_") || (strings.Contains(text, "_") && strings.Contains(name, "_"+text+"_")) {
			return []error{fmt.Errorf("status %d should be a label value, not part of the name", code)}
		}
	}
	return nil
}

// TestCollectorLint: after a Transport has answered 429 (a body it could not
// replay) and 502 (an upstream it could not dial), each answer is counted
// under its code, and the lint finds nothing in the registry.
func TestCollectorLint(t *testing.T) {
	cfg := transport.DefaultConfig()
	cfg.PerRequestBytes = 1 << 10
	cfg.ErrorLog = proxytest.QuietLog()
	// The first connection refuses its stream once it has more than the
	// limit, so the body cannot be replayed, however busy the machine.
	up := proxytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		proxytest.Options{RefuseEvery: math.MaxInt64, RefuseAfter: cfg.PerRequestBytes})
	defer up.Close()
	dead := httptest.NewServer(nil)
	dead.Close()
	inner := up.Transport()
	defer inner.CloseIdleConnections()
	tr := transport.New(inner, cfg)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(teebodyprom.NewCollector(tr.Stats))

	for _, target := range []string{up.URL, dead.URL} {
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		proxy := &proxytest.HandProxy{Target: u, Transport: tr, ErrorHandler: tr.ErrorHandler}
		proxy.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(make([]byte, 64<<10))))
	}

	const want = `
# HELP teebody_error_responses_total Answers written in place of the upstream's, by status code: 429 when a body could not be sent again, 502 for other upstream errors.
# TYPE teebody_error_responses_total counter
teebody_error_responses_total{code="429"} 1
teebody_error_responses_total{code="502"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "teebody_error_responses_total"); err != nil {
		t.Error(err)
	}
	problems, err := lint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestLintOldNames: the lint fails on the names the Collector exported
// before it followed the conventions (testdata/old-names.txt).
func TestLintOldNames(t *testing.T) {
	text, err := os.ReadFile("testdata/old-names.txt")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	problems, err := lint(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		return slices.Collect(maps.Values(families)), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range problems {
		got[p.Metric] = true
	}
	for _, name := range []string{"teebody_bytes_held", "teebody_peak_bytes_held", "teebody_bad_gateway_written_total"} {
		if !got[name] {
			t.Errorf("the lint passes %s", name)
		}
	}
}
