// Package clientgo_test shows the library under client-go, as
// rest.Config.Wrap(tr.Wrap): the library's own module cannot import
// client-go (importing teebody must never move a user's client-go version),
// so transport.ExampleTransport_Wrap there shows the method's shape, and
// this example, in the demo's module, runs it under a real client-go against
// the embedded API server. It holds an example only.
package clientgo_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	k8stransport "k8s.io/client-go/transport"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/internal/proxytest"
	"github.com/teebody/teebody/pkg/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Transport.Wrap is of client-go's WrapperFunc type, which rest.Config.Wrap
// takes: the build fails if the two ever part.
var _ k8stransport.WrapperFunc = transport.New(nil, transport.DefaultConfig()).Wrap

// client-go with teebody under it. The API server here refuses every stream
// of its first connection with a GOAWAY once the request body has started,
// as a kube-apiserver with --goaway-chance does to the streams in flight on
// a connection it ends; client-go then has to send the write again on a new
// connection.
func Example() {
	api := proxytest.NewServer(fakeapi.New(fakeapi.Options{}), proxytest.Options{RefuseEvery: math.MaxInt64})
	defer api.Close()
	cfg := &rest.Config{Host: api.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw}),
	}}

	tr := transport.New(nil, transport.DefaultConfig()) // or transport.ConfigFromEnv()
	cfg.Wrap(tr.Wrap)

	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		panic(err)
	}
	defer hc.CloseIdleConnections()
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	// A body client-go streams from a reader has no GetBody: without
	// teebody the refused write fails with "http2: Transport: cannot retry
	// err [...] define Request.GetBody"; with it, it is replayed.
	stream := io.MultiReader(strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"streamed"}}`))
	var streamed corev1.ConfigMap
	err = cs.CoreV1().RESTClient().Post().Namespace("default").Resource("configmaps").
		SetHeader("Content-Type", "application/json").Body(stream).Do(ctx).Into(&streamed)
	if err != nil {
		panic(err)
	}
	fmt.Println("created", streamed.Name, "after", api.Goaways(), "GOAWAY")

	// A typed write's body is a byte slice, which client-go can rewind by
	// itself (GetBody set): teebody passes it through untouched.
	typed, err := cs.CoreV1().ConfigMaps("default").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "typed"}}, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("created", typed.Name)

	// tr counts for every Transport that its Wrap made. How many replays
	// one refusal takes is up to Go's transports, so only "some" prints.
	st := tr.Stats()
	fmt.Println("buffered", st.Buffered, "replayed", st.ReplaysServed > 0, "passed through with GetBody", st.PassedThrough.GetBodySet)
	// Output:
	// created streamed after 1 GOAWAY
	// created typed
	// buffered 1 replayed true passed through with GetBody 1
}
