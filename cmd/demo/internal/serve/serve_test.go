package serve_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServesHTTP2OverTLS: the server answers over HTTP/2 with a
// certificate its Spec's CA data verifies, and stops serving on Shutdown.
func TestServesHTTP2OverTLS(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.Proto)) })
	s, err := serve.Start(serve.Options{Name: "n", Handler: h, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	spec := s.Spec()
	if spec.Name != "n" || spec.Token != "tok" {
		t.Errorf("spec %+v", spec)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(spec.CAData)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(spec.Server + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("proto %s, want HTTP/2", resp.Proto)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after Shutdown returned")
	}
	if _, err := (&http.Client{Transport: tr}).Get(spec.Server + "/"); err == nil {
		t.Fatal("still serving after Shutdown")
	}
}

func TestListenFails(t *testing.T) {
	_, err := serve.Start(serve.Options{Listen: "256.0.0.1:0", Handler: http.NotFoundHandler()})
	if !errors.Is(err, serve.ErrListen) {
		t.Fatalf("err = %v, want ErrListen", err)
	}
}
