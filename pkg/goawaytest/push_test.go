package goawaytest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/teebody/teebody/pkg/goawaytest"
	"golang.org/x/net/http2"
)

// A client that enables server push gets a pushed response larger than its
// stream's initial window: its WINDOW_UPDATE frames for the pushed stream,
// which the server opened, reach the server.
func TestPushFlowControl(t *testing.T) {
	pushed := strings.Repeat("p", 200<<10)
	s := goawaytest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pushed" {
			_, _ = w.Write([]byte(pushed))
			return
		}
		if err := w.(http.Pusher).Push("/pushed", nil); err != nil {
			t.Errorf("Push: %v", err)
		}
	}))
	defer s.Close()
	rc := dialRaw(t, s)
	rc.check(rc.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 1}))
	rc.headers(1, "GET", "/", true)
	n := 0
	for {
		f, ok := rc.read().(*http2.DataFrame)
		if !ok || f.StreamID != 2 {
			continue
		}
		n += len(f.Data())
		if f.StreamEnded() {
			break
		}
		if len(f.Data()) > 0 {
			rc.check(rc.fr.WriteWindowUpdate(0, uint32(len(f.Data()))))
			rc.check(rc.fr.WriteWindowUpdate(2, uint32(len(f.Data()))))
		}
	}
	if n != len(pushed) {
		t.Errorf("pushed response of %d bytes, want %d", n, len(pushed))
	}
}
