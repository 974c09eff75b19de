package fakeapi

import (
	"net/http"
	"slices"

	"golang.org/x/net/websocket"
)

// ExecProtocol is the WebSocket subprotocol of kubectl exec that the exec
// endpoint speaks (a real one frames stdin, stdout and stderr as channels;
// this one echoes).
const ExecProtocol = "v5.channel.k8s.io"

// execEcho is an exec-style endpoint: it upgrades GET .../pods/NAME/exec to
// a WebSocket, as the API server does for kubectl exec, and sends every
// binary message back unchanged until the client closes, so that a test
// can check that bytes cross an upgraded connection intact both ways.
func execEcho() http.Handler {
	return websocket.Server{
		// kubectl sends no Origin; the API server authenticates the user,
		// not the page.
		Handshake: func(cfg *websocket.Config, r *http.Request) error {
			if slices.Contains(cfg.Protocol, ExecProtocol) {
				cfg.Protocol = []string{ExecProtocol}
			} else {
				cfg.Protocol = nil
			}
			return nil
		},
		Handler: func(ws *websocket.Conn) {
			defer ws.Close()
			for {
				var msg []byte
				if err := websocket.Message.Receive(ws, &msg); err != nil {
					return // the client closed, or the connection broke
				}
				if err := websocket.Message.Send(ws, msg); err != nil {
					return
				}
			}
		},
	}
}
