package fakeapi_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/teebody/teebody/cmd/demo/internal/fakeapi"
	"github.com/teebody/teebody/cmd/demo/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "secret-token"

// start serves the fake API over TLS with HTTP/2, as the demo does, and
// returns a client-go clientset for it.
func start(t *testing.T, opts fakeapi.Options) (*httptest.Server, *kubernetes.Clientset) {
	t.Helper()
	srv := httptest.NewUnstartedServer(fakeapi.New(opts))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, testutil.Clientset(t, &rest.Config{
		Host:            srv.URL,
		BearerToken:     opts.Token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
	})
}

func TestVersion(t *testing.T) {
	_, cs := start(t, fakeapi.Options{Token: token})
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != fakeapi.GitVersion {
		t.Fatalf("GitVersion = %q, want %q", v.GitVersion, fakeapi.GitVersion)
	}
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) == 0 || groups.Groups[0].Name != "" {
		t.Fatalf("groups = %+v, want the core group", groups.Groups)
	}
}

func TestNamespaces(t *testing.T) {
	_, cs := start(t, fakeapi.Options{})
	ctx := context.Background()
	nss := cs.CoreV1().Namespaces()
	if _, err := nss.Get(ctx, "demo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Get before create: err = %v, want NotFound", err)
	}
	ns, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.UID == "" || ns.ResourceVersion == "" || ns.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("created namespace lacks server fields: %+v", ns)
	}
	if _, err := nss.Create(ctx, ns, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: err = %v, want AlreadyExists", err)
	}
	got, err := nss.Get(ctx, "demo", metav1.GetOptions{})
	if err != nil || got.UID != ns.UID {
		t.Fatalf("Get = %v, %v; want the created namespace", got, err)
	}
	list, err := nss.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("List = %v, %v; want default and demo", list, err)
	}
	_, err = nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "Not_Valid"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("invalid name: err = %v, want Invalid", err)
	}
}

func TestConfigMaps(t *testing.T) {
	_, cs := start(t, fakeapi.Options{Token: token})
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	want := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-1"},
		Data:       map[string]string{"payload": strings.Repeat("x", 4096)},
	}
	created, err := cms.Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Namespace != "default" || created.Data["payload"] != want.Data["payload"] {
		t.Fatalf("created = %+v, want the sent data in default", created.ObjectMeta)
	}
	if _, err := cms.Create(ctx, want, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: err = %v, want AlreadyExists", err)
	}
	got, err := cms.Get(ctx, "cm-1", metav1.GetOptions{})
	if err != nil || got.Data["payload"] != want.Data["payload"] || got.UID != created.UID {
		t.Fatalf("Get = %v; want the created ConfigMap", err)
	}
	if list, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 1 {
		t.Fatalf("List = %v, %v; want one item", list, err)
	}
	if err := cms.Delete(ctx, "cm-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "cm-1", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: err = %v, want NotFound", err)
	}
	if _, err := cms.Get(ctx, "cm-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Get after delete: err = %v, want NotFound", err)
	}
	_, err = cs.CoreV1().ConfigMaps("missing").Create(ctx, want, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("create in a missing namespace: err = %v, want NotFound", err)
	}
	gen, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
	if err != nil || !strings.HasPrefix(gen.Name, "gen-") || len(gen.Name) != len("gen-")+5 {
		t.Fatalf("generateName: %v, %v", gen, err)
	}
	big := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{"a": strings.Repeat("x", 1<<20)}}
	if _, err := cms.Create(ctx, big, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("ConfigMap over 1 MiB: err = %v, want Invalid", err)
	}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "kube-system"}}
	if _, err := cms.Create(ctx, other, metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Fatalf("namespace mismatch: err = %v, want BadRequest", err)
	}
}

// TestBodyChecked sends bodies client-go would not: each must be refused
// with the API server's Status, so a proxy that mangles a body is caught.
func TestBodyChecked(t *testing.T) {
	srv, _ := start(t, fakeapi.Options{Token: token})
	hc := srv.Client()
	cases := []struct {
		name, contentType, body string
		code                    int
	}{
		{"truncated", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"`, http.StatusBadRequest},
		{"wrong kind", "application/json", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}`, http.StatusBadRequest},
		{"empty", "application/json", ``, http.StatusBadRequest},
		{"cbor", "application/cbor", `{}`, http.StatusUnsupportedMediaType},
		{"good", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, http.StatusCreated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", srv.URL+"/api/v1/namespaces/default/configmaps", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.contentType)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tc.code)
			}
			if resp.ProtoMajor != 2 {
				t.Fatalf("proto = %s, want HTTP/2", resp.Proto)
			}
		})
	}
}

// TestBodyTooLarge: a body over the API server's 3 MiB limit is refused
// with its Status, whether its length is known up front or not.
func TestBodyTooLarge(t *testing.T) {
	srv, _ := start(t, fakeapi.Options{Token: token})
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", 3<<20) + `"}}`
	for name, r := range map[string]io.Reader{
		"known length":   strings.NewReader(body),
		"unknown length": io.MultiReader(strings.NewReader(body)),
	} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest("POST", srv.URL+"/api/v1/namespaces/default/configmaps", r)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(got), "limit is 3145728") {
				t.Errorf("got %s %s, want 413 with limit is 3145728", resp.Status, got)
			}
		})
	}
}

func TestUnauthorized(t *testing.T) {
	srv, _ := start(t, fakeapi.Options{Token: token})
	for _, auth := range []string{"", "Bearer wrong", "Basic " + token, "Bearer " + token + "x"} {
		req, _ := http.NewRequest("GET", srv.URL+"/version", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
	}
}

func TestUnknownPathIsStatus404(t *testing.T) {
	_, cs := start(t, fakeapi.Options{})
	err := cs.CoreV1().RESTClient().Get().AbsPath("/apis/apps/v1/deployments").Do(context.Background()).Error()
	if !apierrors.IsNotFound(err) {
		t.Fatalf("err = %v, want NotFound", err)
	}
}

// goaway sends n GET /version one after another over a raw HTTP/2
// connection to addr, and returns the GOAWAY frame the server sent before
// the last response ended, or nil; with wait, it then reads on until one
// comes (the connection's deadline bounds a hang).
func goaway(t *testing.T, addr string, n int, wait bool) *http2.GoAwayFrame {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(time.Minute)); err != nil { // bounds a hang, asserts nothing
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "localhost"}, {":path", "/version"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	var got *http2.GoAwayFrame
	read := func(until func(http2.Frame) bool) {
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("after %d requests: %v", n, err)
			}
			if g, ok := f.(*http2.GoAwayFrame); ok && got == nil {
				got = &http2.GoAwayFrame{LastStreamID: g.LastStreamID, ErrCode: g.ErrCode}
			}
			if until(f) {
				return
			}
		}
	}
	for i := range n {
		id := uint32(2*i + 1)
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		read(func(f http2.Frame) bool {
			return f.Header().StreamID == id && f.Header().Flags.Has(http2.FlagDataEndStream)
		})
	}
	if wait && got == nil {
		read(func(http2.Frame) bool { return got != nil })
	}
	return got
}

// TestGoawayChance: at chance 1 the server answers the first request and
// sends a graceful GOAWAY (NO_ERROR) with it as the last stream; at chance
// 0 it answers three requests without one.
func TestGoawayChance(t *testing.T) {
	srv, _ := start(t, fakeapi.Options{GoawayChance: 1})
	if g := goaway(t, srv.Listener.Addr().String(), 1, true); g.ErrCode != http2.ErrCodeNo || g.LastStreamID != 1 {
		t.Fatalf("GOAWAY = %+v, want a graceful one with last stream 1", g)
	}
	srv, _ = start(t, fakeapi.Options{GoawayChance: 0})
	if g := goaway(t, srv.Listener.Addr().String(), 3, false); g != nil {
		t.Fatalf("GOAWAY %+v at chance 0", g)
	}
}

// TestGoawayAfter: served by Start with GoawayAfter 3, each connection
// answers two requests without a GOAWAY, and ends with a graceful one
// after its third (stream 5).
func TestGoawayAfter(t *testing.T) {
	srv, err := fakeapi.Start(fakeapi.Options{GoawayAfter: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	addr := strings.TrimPrefix(srv.Spec().Server, "https://")
	if g := goaway(t, addr, 2, false); g != nil {
		t.Fatalf("GOAWAY %+v after 2 requests", g)
	}
	if g := goaway(t, addr, 3, true); g.ErrCode != http2.ErrCodeNo || g.LastStreamID != 5 {
		t.Fatalf("GOAWAY = %+v, want a graceful one with last stream 5", g)
	}
}
