package fakeapi_test

import (
	"bytes"
	"crypto/tls"
	"strings"
	"testing"

	"golang.org/x/net/websocket"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
)

// TestExecEcho: the exec endpoint upgrades to a WebSocket with kubectl's
// subprotocol, behind the bearer token like every route, and echoes
// binary messages unchanged.
func TestExecEcho(t *testing.T) {
	srv, _ := start(t, fakeapi.Options{Token: token})
	dial := func(tok string) (*websocket.Conn, error) {
		cfg, err := websocket.NewConfig(strings.Replace(srv.URL, "https", "wss", 1)+"/api/v1/namespaces/default/pods/p/exec?command=cat", "http://localhost")
		if err != nil {
			t.Fatal(err)
		}
		cfg.TlsConfig = &tls.Config{InsecureSkipVerify: true}
		cfg.Protocol = []string{"v4.channel.k8s.io", fakeapi.ExecProtocol}
		if tok != "" {
			cfg.Header.Set("Authorization", "Bearer "+tok)
		}
		return websocket.DialConfig(cfg)
	}
	if ws, err := dial(""); err == nil {
		ws.Close()
		t.Fatal("upgraded without the token")
	}
	ws, err := dial(token)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if got := ws.Config().Protocol; len(got) != 1 || got[0] != fakeapi.ExecProtocol {
		t.Errorf("subprotocol %q, want %q", got, fakeapi.ExecProtocol)
	}
	for _, msg := range [][]byte{{0}, bytes.Repeat([]byte("stdin "), 10000)} {
		if err := websocket.Message.Send(ws, msg); err != nil {
			t.Fatal(err)
		}
		var got []byte
		if err := websocket.Message.Receive(ws, &got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("echo of %d bytes: %d bytes, equal %v", len(msg), len(got), bytes.Equal(got, msg))
		}
	}
}
