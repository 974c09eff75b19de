package serve_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/cmd/demo/internal/certs"
	"github.com/teebody/teebody/cmd/demo/internal/serve"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestServesHTTP2OverTLS(t *testing.T) {
	pair, err := certs.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.Proto)) })
	s, err := serve.Start("127.0.0.1:0", h, pair.Cert, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pair.CAData)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(s.URL() + "/")
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
	if _, err := (&http.Client{Transport: tr}).Get(s.URL() + "/"); err == nil {
		t.Fatal("still serving after Shutdown")
	}
}

func TestListenFails(t *testing.T) {
	pair, _ := certs.SelfSigned()
	_, err := serve.Start("256.0.0.1:0", http.NotFoundHandler(), pair.Cert, slog.New(slog.DiscardHandler))
	if !errors.Is(err, serve.ErrListen) {
		t.Fatalf("err = %v, want ErrListen", err)
	}
}
