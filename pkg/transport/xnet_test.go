//lint:file-ignore SA1019 golang.org/x/net/http2.Transport is deprecated in favour of net/http's, but programs still use it directly, and the fix must hold there too.

package transport_test

import (
	"net/http"
	"testing"

	"golang.org/x/net/http2"
)

// xh2Transport returns golang.org/x/net/http2's transport to u, used
// directly.
func xh2Transport(t testing.TB, u *upstream) *http2.Transport {
	tr := &http2.Transport{TLSClientConfig: u.srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}
