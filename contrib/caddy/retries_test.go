package teebodycaddy_test

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestLBRetriesDialError: Caddy's lb_retries resend a POST whose first
// upstream could not be dialled (fail_duration marks it down, so that the
// retry picks the next); nothing of its body was read, so the next upstream
// gets it whole.
func TestLBRetriesDialError(t *testing.T) {
	closed, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, false, nil)
	tester, addr := startCaddy(t, `%s {
	reverse_proxy https://127.0.0.1:`+fmt.Sprint(closed)+` `+up.URL+` {
		lb_policy first
		lb_retries 1
		fail_duration 1m
		transport teebody {
			tls_insecure_skip_verify
		}
	}
}
`)
	resp, text := post(t, tester, addr+"/upload", "dial", randomBody(64<<10))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST: %s %q, want 200 from the second upstream", resp.Status, text)
	}
	if intact, wrong := up.arrivals("dial"); intact != 1 || wrong != 0 {
		t.Errorf("the body arrived intact %d times, damaged %d times; want 1 and 0", intact, wrong)
	}
}

// TestLBRetriesSpentBody: an upstream reads part of a POST and resets the
// stream; lb_retry_match makes Caddy try again, with the same body, of which
// the first attempt consumed a part. That attempt must not send the rest as
// if it were the whole, nor claim (429) that the request was not processed:
// it fails at once with the first attempt's error, which Caddy answers 502,
// and the upstream sees one request.
func TestLBRetriesSpentBody(t *testing.T) {
	var requests atomic.Int64
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if _, err := io.ReadFull(r.Body, make([]byte, 1<<10)); err != nil {
			return
		}
		panic(http.ErrAbortHandler) // resets the stream
	})
	tester, addr := startCaddy(t, `%s {
	reverse_proxy `+up.URL+` {
		lb_retries 1
		lb_retry_match {
			method POST
		}
		transport teebody {
			tls_insecure_skip_verify
		}
	}
}
`)
	resp, text := post(t, tester, addr+"/upload", "spent", randomBody(256<<10))
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("POST: %s %q, want 502", resp.Status, text)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the upstream saw %d requests, want 1", n)
	}
}
