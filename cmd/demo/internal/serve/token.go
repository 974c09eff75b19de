package serve

import (
	"crypto/subtle"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/client-go/kubernetes/scheme"
)

// Codecs are the serializers the demo's servers answer Kubernetes Status
// errors with (responsewriters.RespondWithError), as the API server does.
var Codecs = scheme.Codecs.WithoutConversion()

// RequireToken returns a handler that passes to next only the requests
// carrying "Authorization: Bearer token", and answers every other one 401
// with a Kubernetes Status, as the API server does. The comparison takes
// the same time for every wrong token of a given length; an empty token
// admits nobody. Safe for concurrent use.
func RequireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			responsewriters.RespondWithError(w, r, apierrors.NewUnauthorized("Unauthorized"), Codecs)
			return
		}
		next.ServeHTTP(w, r)
	})
}
