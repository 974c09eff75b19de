/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package apiserver

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/teebody/teebody/pkg/goawaytest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	apiregistration "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"
)

// TestProxyHandlerRefusedWrite sends a create through the proxy handler to an
// aggregated API server that refuses it with a graceful HTTP/2 GOAWAY, as
// k8s.io/apiserver's --goaway-chance or a restart does. The GOAWAY's last
// stream ID is below the request's stream, so the server did not process it
// (RFC 9113, section 6.8), and the request is safe to send again. The server
// refuses only the first attempt. The body arrives through a server, as a
// client's does, so it has no GetBody and Go's HTTP/2 client cannot resend it.
// kubernetes/kubernetes#135285: the client gets a 503 that client-go does not
// retry.
func TestProxyHandlerRefusedWrite(t *testing.T) {
	const path = "/apis/foo/v1/namespaces/ns/bars"
	body := `{"kind":"Bar","apiVersion":"foo/v1","metadata":{"name":"x"},"data":"` + strings.Repeat("x", 1000) + `"}`

	var refused atomic.Bool
	upstream := goawaytest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := io.ReadAll(r.Body)
		if err != nil || string(got) != body {
			t.Errorf("the aggregated API server read %d bytes (error %v), want the %d bytes the client sent", len(got), err, len(body))
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}), goawaytest.Refuse(func(r *http.Request) bool {
		return r.Method == http.MethodPost && refused.CompareAndSwap(false, true)
	}))
	cert, err := tls.X509KeyPair(svcCrt, svcKey)
	if err != nil {
		t.Fatal(err)
	}
	upstream.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	upstream.StartTLS()
	defer upstream.Close()

	handler := &proxyHandler{
		localDelegate:              http.NewServeMux(),
		serviceResolver:            &mockedRouter{destinationHost: strings.TrimPrefix(upstream.URL, "https://")},
		proxyCurrentCertKeyContent: func() ([]byte, []byte) { return emptyCert(), emptyCert() },
	}
	handler.updateAPIService(&apiregistration.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1.foo"},
		Spec: apiregistration.APIServiceSpec{
			Service:  &apiregistration.ServiceReference{Name: "test-service", Namespace: "test-ns", Port: ptr.To[int32](443)},
			Group:    "foo",
			Version:  "v1",
			CABundle: testCACrt,
		},
		Status: apiregistration.APIServiceStatus{
			Conditions: []apiregistration.APIServiceCondition{
				{Type: apiregistration.Available, Status: apiregistration.ConditionTrue},
			},
		},
	})
	server := httptest.NewServer(contextHandler(handler, &user.DefaultInfo{Name: "username", Groups: []string{"one"}}))
	defer server.Close()

	req, err := http.NewRequest(http.MethodPost, server.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}

	// Without a refusal the test would prove nothing.
	if s := upstream.Stats(); s.Refusals == 0 {
		t.Fatalf("the aggregated API server refused no stream (%+v)", s)
	}
	ran := upstream.Ran(req)
	switch resp.StatusCode {
	case http.StatusCreated:
		// The refused request was sent again, and ran once.
		if ran != 1 {
			t.Errorf("201 Created, but the aggregated API server ran the create %d times, want 1", ran)
		}
	case http.StatusTooManyRequests:
		// The body could not be kept for a replay: the client may send the
		// request again, and the aggregated API server has not run it.
		if resp.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After, body %q", respBody)
		}
		if ran != 0 {
			t.Errorf("429, but the aggregated API server ran the create %d times, want 0", ran)
		}
	default:
		t.Errorf("%s, body %q; want 201 Created (the refused create sent again) or 429 with Retry-After (the aggregated API server ran it %d times)",
			resp.Status, respBody, ran)
	}
}
