// Package fakeapi is the demo's embedded upstream: just enough of the
// Kubernetes API for client-go (version and discovery, namespaces,
// ConfigMaps), kept in memory, behind the API server's own probabilistic
// GOAWAY filter.
package fakeapi

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/server/filters"

	"github.com/teebody/teebody/cmd/demo/internal/bearer"
	"github.com/teebody/teebody/cmd/demo/internal/kstatus"
)

// GitVersion is the version the fake API server reports on /version.
const GitVersion = "v1.37.2-teebody-fake"

// maxBodyBytes is the API server's own request size limit (3 MiB).
const maxBodyBytes = 3 << 20

// errTooLarge is the API server's answer to a body over maxBodyBytes.
func errTooLarge() *apierrors.StatusError {
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", maxBodyBytes))
}

// Options configure the handler.
type Options struct {
	// GoawayChance is the chance that an HTTP/2 request is answered with
	// "Connection: close", which makes Go's HTTP/2 server send a graceful
	// GOAWAY: the API server's --goaway-chance (at most 0.02 there).
	GoawayChance float64
	// Token, when set, is the bearer token every request must carry; others
	// get 401. Empty: no authentication.
	Token string
}

// New returns the API handler with an empty store holding the "default"
// namespace. It is safe for concurrent use: the store has its own lock.
func New(opts Options) http.Handler {
	a := &api{store: newStore()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /version", a.version)
	mux.HandleFunc("GET /api", a.apiVersions)
	mux.HandleFunc("GET /api/v1", a.apiResources)
	mux.HandleFunc("GET /apis", a.apiGroups)
	mux.HandleFunc("GET /api/v1/namespaces", a.listNamespaces)
	mux.HandleFunc("POST /api/v1/namespaces", a.createNamespace)
	mux.HandleFunc("GET /api/v1/namespaces/{ns}", a.getNamespace)
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/configmaps", a.listConfigMaps)
	mux.HandleFunc("POST /api/v1/namespaces/{ns}/configmaps", a.createConfigMap)
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/configmaps/{name}", a.getConfigMap)
	mux.HandleFunc("DELETE /api/v1/namespaces/{ns}/configmaps/{name}", a.deleteConfigMap)
	mux.Handle("GET /api/v1/namespaces/{ns}/pods/{name}/exec", execEcho())
	mux.HandleFunc("/", notFound)

	var h http.Handler = mux
	h = limitBody(h)
	if opts.Token != "" {
		h = bearer.Require(opts.Token, h)
	}
	// Outermost, as in the API server's handler chain: even a request that
	// fails authentication can be the one that sends the GOAWAY.
	return filters.WithProbabilisticGoaway(h, opts.GoawayChance)
}

// api serves the routes; store holds the objects.
type api struct {
	store *store
}

func notFound(w http.ResponseWriter, r *http.Request) {
	kstatus.Write(w, apierrors.NewGenericServerResponse(http.StatusNotFound, r.Method,
		apiResource(""), "", "the server could not find the requested resource", 0, false).ErrStatus)
}

func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBodyBytes {
			kstatus.Write(w, errTooLarge().ErrStatus)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next.ServeHTTP(w, r)
	})
}
