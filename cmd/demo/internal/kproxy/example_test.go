package kproxy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/pkg/transport"
)

// Kubernetes' proxy handler in front of an API server that ends every
// connection with a GOAWAY after its first request, with the teebody
// transport as its transport and its Responder, which answers 429 when a
// body could not be replayed.
func Example() {
	up, err := fakeapi.Start(fakeapi.Options{GoawayAfter: 1}, nil) // the embedded API server
	if err != nil {
		panic(err)
	}
	defer up.Shutdown(context.Background())
	spec := up.Spec()
	upCfg := &rest.Config{Host: spec.Server, BearerToken: spec.Token, TLSClientConfig: rest.TLSClientConfig{CAData: spec.CAData}}

	// The upstream's own transport (its CA, credentials), wrapped by teebody.
	inner, err := rest.TransportFor(upCfg)
	if err != nil {
		panic(err)
	}
	defer utilnet.CloseIdleConnectionsFor(inner)
	tr := transport.New(inner, transport.DefaultConfig())
	location, _ := url.Parse(spec.Server)

	// One UpgradeAwareHandler per request, as the kube-aggregator makes
	// them (with wrapTransport true its ServeHTTP writes to the handler).
	// tr's WrappedRoundTripper lets upgrades find the CA and client
	// certificate; tr.Responder() answers 429 with Retry-After where
	// transport.ShouldRetryLater(err) holds, else 502.
	front := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		loc := *location
		loc.Path, loc.RawQuery = r.URL.Path, r.URL.RawQuery
		h := proxy.NewUpgradeAwareHandler(&loc, tr, true, false, tr.Responder())
		h.UseLocationHost = true
		h.ServeHTTP(w, r)
	}))
	defer front.Close()

	// A client-go client of the proxy.
	cfg := &rest.Config{Host: front.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		panic(err)
	}
	defer hc.CloseIdleConnections()
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		panic(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "through-kube-proxy"}, Data: map[string]string{"k": "v"}}
	created, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("created", created.Name, "through UpgradeAwareHandler; buffered:", tr.Stats().Buffered)
	// Output: created through-kube-proxy through UpgradeAwareHandler; buffered: 1
}
