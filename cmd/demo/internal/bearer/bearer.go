// Package bearer guards an http.Handler with one static bearer token.
package bearer

import (
	"crypto/subtle"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/teebody/teebody/cmd/demo/internal/kstatus"
)

// Require returns a handler that passes to next only the requests carrying
// "Authorization: Bearer token", and answers every other one 401 with a
// Kubernetes Status, as the API server does. The comparison takes the same
// time for every wrong token of a given length. Safe for concurrent use.
func Require(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			kstatus.Write(w, apierrors.NewUnauthorized("Unauthorized").ErrStatus)
			return
		}
		next.ServeHTTP(w, r)
	})
}
