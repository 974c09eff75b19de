package goawaytest

import (
	"crypto/tls"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/http2/hpack"
)

// newRequest returns a server request made of a stream's header fields,
// with an empty body: what the server knows of a request before its body.
// end says that the stream has no body.
func newRequest(fields []hpack.HeaderField, end bool, remote string, state *tls.ConnectionState) *http.Request {
	r := &http.Request{
		Proto: "HTTP/2.0", ProtoMajor: 2, Header: http.Header{}, Body: http.NoBody,
		ContentLength: -1, RemoteAddr: remote, TLS: state,
	}
	var scheme string
	for _, f := range fields {
		switch f.Name {
		case ":method":
			r.Method = f.Value
		case ":scheme":
			scheme = f.Value
		case ":authority":
			r.Host = f.Value
		case ":path":
			r.RequestURI = f.Value
		default:
			if !strings.HasPrefix(f.Name, ":") {
				r.Header.Add(f.Name, f.Value)
			}
		}
	}
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		u = &url.URL{Path: r.RequestURI}
	}
	u.Scheme, u.Host, r.URL = scheme, r.Host, u
	if n, err := strconv.ParseInt(r.Header.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		r.ContentLength = n
	}
	if end {
		r.ContentLength = 0
	}
	return r
}
