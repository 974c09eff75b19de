package teebodycaddy_test

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddytest"
)

// TestAdapt: every setting of teebody's, mixed with subdirectives of
// `transport http` (which reach the embedded HTTP transport, TLS among
// them), adapts to the module's JSON.
func TestAdapt(t *testing.T) {
	caddytest.AssertAdapt(t, `:8080 {
	reverse_proxy https://127.0.0.1:8443 {
		transport teebody {
			total 100MiB
			dial_timeout 2s
			per_request 1MiB
			adaptive
			adaptive_floor 16KiB
			tls_insecure_skip_verify
			retry_after 2s
			on_refused error
			name api
			versions 2
		}
	}
}
`, "caddyfile", `{
	"apps": {
		"http": {
			"servers": {
				"srv0": {
					"listen": [
						":8080"
					],
					"routes": [
						{
							"handle": [
								{
									"handler": "reverse_proxy",
									"transport": {
										"adaptive": true,
										"adaptive_floor": "16KiB",
										"dial_timeout": 2000000000,
										"name": "api",
										"on_refused": "error",
										"per_request": "1MiB",
										"protocol": "teebody",
										"retry_after": 2000000000,
										"tls": {
											"insecure_skip_verify": true
										},
										"total": "100MiB",
										"versions": [
											"2"
										]
									},
									"upstreams": [
										{
											"dial": "127.0.0.1:8443"
										}
									]
								}
							]
						}
					]
				}
			}
		}
	}
}`)
}

// TestAdaptDefaults: a bare `transport teebody` has no setting of its own
// (each comes from the environment or the library's defaults at Provision),
// and an https upstream turns on the embedded transport's TLS as for
// `transport http`; `adaptive false` is kept as false.
func TestAdaptDefaults(t *testing.T) {
	caddytest.AssertAdapt(t, `:8080 {
	reverse_proxy https://127.0.0.1:8443 {
		transport teebody
	}
	reverse_proxy /off 127.0.0.1:8080 {
		transport teebody {
			adaptive false
		}
	}
}
`, "caddyfile", `{
	"apps": {
		"http": {
			"servers": {
				"srv0": {
					"listen": [
						":8080"
					],
					"routes": [
						{
							"match": [
								{
									"path": [
										"/off"
									]
								}
							],
							"handle": [
								{
									"handler": "reverse_proxy",
									"transport": {
										"adaptive": false,
										"protocol": "teebody"
									},
									"upstreams": [
										{
											"dial": "127.0.0.1:8080"
										}
									]
								}
							]
						},
						{
							"handle": [
								{
									"handler": "reverse_proxy",
									"transport": {
										"protocol": "teebody",
										"tls": {}
									},
									"upstreams": [
										{
											"dial": "127.0.0.1:8443"
										}
									]
								}
							]
						}
					]
				}
			}
		}
	}
}`)
}

// TestAdaptErrors: a malformed value fails the adaptation with an error that
// names the setting and its line, and so does a subdirective that neither
// teebody nor `transport http` knows.
func TestAdaptErrors(t *testing.T) {
	for _, tc := range []struct {
		line, want string
	}{
		{"total 12XB", `total: invalid size "12XB": unknown unit "XB": want B, kB, KB, k, MB, M, GB, G, TB, T, KiB, Ki, MiB, Mi, GiB, Gi, TiB, Ti, at Caddyfile:4`},
		{"total", "wrong argument count"},
		{"total 1MiB 2MiB", "wrong argument count"},
		{"per_request lots", `per_request: invalid size "lots": unknown unit "lots": want B, kB, KB, k, MB, M, GB, G, TB, T, KiB, Ki, MiB, Mi, GiB, Gi, TiB, Ti, at Caddyfile:4`},
		{"per_request 500m", `per_request: invalid size "500m": unknown unit "m"`},
		{"adaptive_floor 1e6", `adaptive_floor: invalid size "1e6": want a decimal number with an optional unit, at Caddyfile:4`},
		{"adaptive maybe", `adaptive: invalid boolean "maybe": want true or false (1, t, T, TRUE, True, 0, f, F, FALSE, False), at Caddyfile:4`},
		{"adaptive yes", `adaptive: invalid boolean "yes"`},
		{"retry_after soon", "retry_after: "},
		{"retry_after -1s", "retry_after: -1s is negative"},
		{"on_refused 502", `on_refused: "502" is not "respond", "status" or "error"`},
		{"name", "wrong argument count"},
		{"dial_timeout never", "bad timeout value 'never'"},
		{"frobnicate", "unrecognized subdirective frobnicate"},
	} {
		_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(`:8080 {
	reverse_proxy 127.0.0.1:8443 {
		transport teebody {
			`+tc.line+`
		}
	}
}
`), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Caddyfile:4") {
			t.Errorf("%s: adapt error %v, want one containing %q at Caddyfile:4", tc.line, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "transport: ") {
			t.Errorf("%s: adapt error %v names the library: one prefix is the setting's", tc.line, err)
		}
	}
}
