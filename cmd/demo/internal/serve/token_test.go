package serve_test

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

func TestRequire(t *testing.T) {
	token := rand.Text()
	h := serve.RequireToken(token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for auth, want := range map[string]int{
		"Bearer " + token:       http.StatusTeapot,
		"":                      http.StatusUnauthorized,
		"Bearer ":               http.StatusUnauthorized,
		"bearer " + token:       http.StatusUnauthorized,
		"Bearer " + token[1:]:   http.StatusUnauthorized,
		"Basic " + token:        http.StatusUnauthorized,
		"Bearer " + token + " ": http.StatusUnauthorized,
	} {
		req := httptest.NewRequest("GET", "/", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Authorization %q: %d, want %d", auth, rec.Code, want)
		}
		if want == http.StatusUnauthorized {
			var st struct{ Kind, Reason string }
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || st.Reason != "Unauthorized" {
				t.Errorf("401 body %q is not an Unauthorized Status", rec.Body.String())
			}
		}
	}
}

func TestEmptyTokenAdmitsNobody(t *testing.T) {
	h := serve.RequireToken("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Authorization", "Bearer ")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", rec.Code)
	}
}
