package teebodycaddy_test

import "testing"

// TestSettingsOverEnv: with env_prefix, a setting of the Caddyfile takes
// the place of its variable, including the Disabled that a TOTAL or PER_REQ
// of 0 sets: buffering is on again unless the other variable, or the
// setting itself, turns it off. A disabled transport's budget is 0.
func TestSettingsOverEnv(t *testing.T) {
	for name, val := range map[string]string{
		"TBA_TOTAL": "0", "TBB_PER_REQ": "0", "TBC_PER_REQ": "0", "TBD_TOTAL": "0", "TBE_TOTAL": "3MiB",
	} {
		t.Setenv(name, val)
	}
	tester, _ := startCaddy(t, `%s {
	reverse_proxy /a 127.0.0.1:1 {
		transport teebody {
			env_prefix TBA_
			name total_over_env_total
			total 2MiB
		}
	}
	reverse_proxy /b 127.0.0.1:1 {
		transport teebody {
			env_prefix TBB_
			name per_request_over_env_per_req
			per_request 1MiB
		}
	}
	reverse_proxy /c 127.0.0.1:1 {
		transport teebody {
			env_prefix TBC_
			name total_beside_env_per_req
			total 2MiB
		}
	}
	reverse_proxy /d 127.0.0.1:1 {
		transport teebody {
			env_prefix TBD_
			name env_total
		}
	}
	reverse_proxy /e 127.0.0.1:1 {
		transport teebody {
			env_prefix TBE_
			name total_0_over_env_total
			total 0
		}
	}
}
`)
	checkMetrics(t, metrics(t, tester), map[string]float64{
		`teebody_budget_bytes{transport="total_over_env_total"}`:         2 << 20,
		`teebody_budget_bytes{transport="per_request_over_env_per_req"}`: 500 << 20,
		`teebody_budget_bytes{transport="total_beside_env_per_req"}`:     0,
		`teebody_budget_bytes{transport="env_total"}`:                    0,
		`teebody_budget_bytes{transport="total_0_over_env_total"}`:       0,
	})
}
