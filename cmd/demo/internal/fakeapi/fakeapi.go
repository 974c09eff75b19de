// Package fakeapi is the demo's embedded upstream: just enough of the
// Kubernetes API for client-go (version and discovery, namespaces,
// ConfigMaps), kept in memory, behind a bearer token and two GOAWAY
// sources: the API server's own probabilistic filter (--goaway-chance), and
// nginx's and load balancers' limit of requests per connection
// (keepalive_requests), which goawaytest.EndAfter plays.
package fakeapi

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/server/filters"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"

	"github.com/teebody/teebody/cmd/demo/internal/serve"
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
	// GOAWAY: the API server's --goaway-chance (at most 0.02 there), drawn
	// by its own filter from an unseeded source.
	GoawayChance float64
	// GoawayAfter, when positive, makes Start end each connection with a
	// graceful GOAWAY after its GoawayAfter-th request
	// (goawaytest.EndAfter), as nginx does after keepalive_requests (1000
	// by default) and AWS's load balancer after 10,000. New ignores it.
	GoawayAfter int64
	// Token, when set, is the bearer token every request must carry; others
	// get 401. Empty: no authentication.
	Token string
}

// New returns the API handler with an empty store holding the "default"
// namespace. It is safe for concurrent use.
func New(opts Options) http.Handler {
	a := &api{tracker: clienttesting.NewObjectTracker(scheme.Scheme, scheme.Codecs.UniversalDecoder())}
	def := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	a.stamp(def)
	if err := a.tracker.Add(def); err != nil {
		panic(err) // an empty tracker takes any first object
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /version", getVersion)
	mux.HandleFunc("GET /api", apiVersions)
	mux.HandleFunc("GET /api/v1", apiResources)
	mux.HandleFunc("GET /apis", apiGroups)
	mux.HandleFunc("GET /api/v1/namespaces", a.list(namespaces))
	mux.HandleFunc("POST /api/v1/namespaces", a.create(namespaces))
	mux.HandleFunc("GET /api/v1/namespaces/{name}", a.get(namespaces))
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/configmaps", a.list(configMaps))
	mux.HandleFunc("POST /api/v1/namespaces/{ns}/configmaps", a.create(configMaps))
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/configmaps/{name}", a.get(configMaps))
	mux.HandleFunc("DELETE /api/v1/namespaces/{ns}/configmaps/{name}", a.delete(configMaps))
	mux.Handle("GET /api/v1/namespaces/{ns}/pods/{name}/exec", execEcho())
	mux.HandleFunc("/", notFound)

	var h http.Handler = mux
	h = limitBody(h)
	if opts.Token != "" {
		h = serve.RequireToken(opts.Token, h)
	}
	// Outermost, as in the API server's handler chain: even a request that
	// fails authentication can be the one that sends the GOAWAY.
	return filters.WithProbabilisticGoaway(h, opts.GoawayChance)
}

// respond answers with err's Kubernetes Status, as the API server does.
// err must be an API status error (apierrors.New*): any other error is
// logged as a programming error and answered 500.
func respond(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.RespondWithError(w, r, err, serve.Codecs)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	respond(w, r, apierrors.NewGenericServerResponse(http.StatusNotFound, r.Method,
		schema.GroupResource{}, "", "the server could not find the requested resource", 0, false))
}

func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBodyBytes {
			respond(w, r, errTooLarge())
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next.ServeHTTP(w, r)
	})
}
