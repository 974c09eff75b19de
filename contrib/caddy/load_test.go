package teebodycaddy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

// loadJSON posts a JSON config to the admin endpoint of the running Caddy (a
// test must have started it) and returns the answer's status and body, or
// the error message the body holds.
func loadJSON(t *testing.T, config string) (int, string) {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
		fmt.Sprintf("http://localhost:%d/load", adminPort), strings.NewReader(config))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error string }
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return resp.StatusCode, e.Error
	}
	return resp.StatusCode, string(b)
}

// proxyConfig is a JSON config whose one server proxies to 127.0.0.1:1
// through the transports given (JSON objects), one route each.
func proxyConfig(t *testing.T, transports ...string) string {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for i, tr := range transports {
		routes = append(routes, fmt.Sprintf(`{"match":[{"path":["/%d"]}],"handle":[{"handler":"reverse_proxy","transport":%s,"upstreams":[{"dial":"127.0.0.1:1"}]}]}`, i, tr))
	}
	return fmt.Sprintf(`{"admin":{"listen":"localhost:%d"},"apps":{"http":{"servers":{"s":{"listen":["127.0.0.1:%d"],"automatic_https":{"disable":true},"routes":[%s]}}}}}`,
		adminPort, p, strings.Join(routes, ","))
}

// TestLoadErrors: a malformed setting in JSON, or in the environment, fails
// the config load (`caddy run`, the admin API's /load) with an error naming
// it, and Caddy keeps the config it had.
func TestLoadErrors(t *testing.T) {
	startCaddy(t, "%s {\n\trespond ok\n}\n")
	for _, tc := range []struct {
		name, transport, env, want string
	}{
		{"total", `{"protocol":"teebody","total":"12XB"}`, "", `teebody: total: invalid size "12XB": unknown unit "XB"`},
		{"total number", `{"protocol":"teebody","total":1024}`, "", `total`},
		{"per_request", `{"protocol":"teebody","per_request":"-"}`, "", `teebody: per_request: invalid size "-": want a decimal number`},
		{"adaptive_floor", `{"protocol":"teebody","adaptive_floor":"KiB"}`, "", `teebody: adaptive_floor: invalid size "KiB": want a decimal number`},
		{"retry_after", `{"protocol":"teebody","retry_after":-1000000000}`, "", `teebody: retry_after: -1s is negative`},
		{"on_refused", `{"protocol":"teebody","on_refused":"maybe"}`, "", `teebody: on_refused: "maybe"`},
		{"environment", `{"protocol":"teebody","env_prefix":"TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_"}`, "12XB", `: transport: TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_TOTAL: invalid size "12XB": unknown unit "XB"`},
		{"http setting", `{"protocol":"teebody","versions":["9"]}`, "", `unsupported HTTP version: 9`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_TOTAL", tc.env)
			}
			code, body := loadJSON(t, proxyConfig(t, tc.transport))
			if code == http.StatusOK || !strings.Contains(body, tc.want) {
				t.Errorf("load: %d %s, want an error containing %q", code, body, tc.want)
			}
			if strings.Contains(body, " teebody: transport: ") || strings.Contains(body, ": transport: invalid") {
				t.Errorf("load: %s: the library's prefix is stacked under another", body)
			}
		})
	}
}

// TestNames: the transports of several reverse_proxy blocks export their
// metrics under labels of their own, the unnamed ones numbered in the
// config's order; two transports of one name fail the load.
func TestNames(t *testing.T) {
	tester, _ := startCaddy(t, "%s {\n\trespond ok\n}\n")
	code, body := loadJSON(t, proxyConfig(t, `{"protocol":"teebody"}`, `{"protocol":"teebody","name":"api"}`, `{"protocol":"teebody","total":"1MiB"}`))
	if code != http.StatusOK {
		t.Fatalf("load: %d %s", code, body)
	}
	checkMetrics(t, metrics(t, tester), map[string]float64{
		`teebody_budget_bytes{transport="0"}`:   500 << 20,
		`teebody_budget_bytes{transport="api"}`: 500 << 20,
		`teebody_budget_bytes{transport="1"}`:   1 << 20,
	})
	code, body = loadJSON(t, proxyConfig(t, `{"protocol":"teebody","name":"api"}`, `{"protocol":"teebody","name":"api"}`))
	if code == http.StatusOK || !strings.Contains(body, `teebody: name: "api"`) {
		t.Errorf("load of two transports named api: %d %s, want an error naming the name", code, body)
	}
}

// TestEnvOnlyWhenAsked: a transport reads the environment only under the
// prefix its env_prefix names. Teleport's variables, set for another
// program of the host, change nothing else.
func TestEnvOnlyWhenAsked(t *testing.T) {
	t.Setenv(transport.EnvPrefix+"TOTAL", "1MiB")
	t.Setenv("MYCADDY_TOTAL", "2MiB")
	tester, _ := startCaddy(t, "%s {\n\trespond ok\n}\n")
	code, body := loadJSON(t, proxyConfig(t,
		`{"protocol":"teebody","name":"plain"}`,
		`{"protocol":"teebody","name":"teleport","env_prefix":"`+transport.EnvPrefix+`"}`,
		`{"protocol":"teebody","name":"mine","env_prefix":"MYCADDY_"}`,
		`{"protocol":"teebody","name":"off","total":"0"}`))
	if code != http.StatusOK {
		t.Fatalf("load: %d %s", code, body)
	}
	checkMetrics(t, metrics(t, tester), map[string]float64{
		`teebody_budget_bytes{transport="plain"}`:    500 << 20,
		`teebody_budget_bytes{transport="teleport"}`: 1 << 20,
		`teebody_budget_bytes{transport="mine"}`:     2 << 20,
		`teebody_budget_bytes{transport="off"}`:      0,
	})
}

// checkMetrics checks that each series in m, metrics in the text format,
// has the value want gives it.
func checkMetrics(t *testing.T, m string, want map[string]float64) {
	t.Helper()
	for series, w := range want {
		if got := metric(t, m, series); got != w {
			t.Errorf("%s = %v, want %v", series, got, w)
		}
	}
}
