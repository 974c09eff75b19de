//go:build unix

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The identity that `demo proxy -chain teleport` impersonates (proxy.ImpersonateUser and ImpersonateGroup in
// cmd/demo/internal/proxy); the suite depends on nothing from the demo's module, so it names them again.
const (
	chainUser  = "teebody-teleport-chain"
	chainGroup = "system:masters"
)

// wantImpersonated asks the API server, through the proxy, who the proxy's requests are from (a
// SelfSubjectReview, itself a write with a body), and fails unless the answer is the identity the chain's
// impersonation wrapper sets: so the chain under test has client-go's wrappers in it, and they reach the server.
func wantImpersonated(t *testing.T, p *demoProxy) {
	t.Helper()
	client, server, closeClient := p.client(t)
	defer closeClient()
	// Up to three tries: through the unfixed chain, a GOAWAY may refuse this write too (a 502), which is the
	// experiment's business, not this check's.
	var b []byte
	for try := 1; ; try++ {
		code, got, err := selfSubjectReview(t, client, server)
		if err != nil {
			t.Fatalf("POST selfsubjectreviews through %s: %v", p.name, err)
		}
		if code == http.StatusCreated {
			b = got
			break
		}
		if code != http.StatusBadGateway || try == 3 {
			t.Fatalf("POST selfsubjectreviews through %s: %d: %s", p.name, code, got)
		}
	}
	var review struct {
		Status struct {
			UserInfo struct {
				Username string   `json:"username"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal(b, &review); err != nil {
		t.Fatalf("selfsubjectreviews through %s: %v: %s", p.name, err, b)
	}
	u := review.Status.UserInfo
	if u.Username != chainUser || !slices.Contains(u.Groups, chainGroup) {
		t.Fatalf("through %s the API server sees user %q in groups %q, want %q in %q: the chain's impersonation "+
			"wrapper did not act", p.name, u.Username, u.Groups, chainUser, chainGroup)
	}
	t.Logf("through %s the API server sees user %q in groups %q", p.name, u.Username, u.Groups)
}

// selfSubjectReview posts a SelfSubjectReview to server with client and returns the status code and body.
func selfSubjectReview(t *testing.T, client *http.Client, server string) (int, []byte, error) {
	body := `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, server+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
		io.NopCloser(strings.NewReader(body))) // no GetBody, as a proxy's inbound body has none
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}
