package upstream_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/teebody/teebody/cmd/demo/internal/testutil"
	"github.com/teebody/teebody/cmd/demo/internal/upstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStart(t *testing.T) {
	u, err := upstream.Start(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := u.Spec()
	hc := testutil.HTTPSClient(t, spec.CAData)
	for token, want := range map[string]int{spec.Token: http.StatusOK, "": http.StatusUnauthorized} {
		req, _ := http.NewRequest("GET", spec.Server+"/version", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		testutil.CheckHTTP2Status(t, hc, req, want, fmt.Sprintf("token %q", token))
	}
	if err := u.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-u.Done()
}
