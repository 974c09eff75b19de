package load_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/teebody/teebody/cmd/demo/internal/load"
)

func TestIsGoaway(t *testing.T) {
	goaway := errors.New("http2: Transport: cannot retry err [http2: Transport received Server's graceful shutdown GOAWAY] after Request.Body was written; define Request.GetBody to avoid this error")
	if !load.IsGoaway(fmt.Errorf("create configmap x: %w", goaway)) {
		t.Error("Go's GOAWAY error not recognised")
	}
	if !load.IsGoaway(errors.New("proxy error: net/http: cannot rewind body after connection loss")) {
		t.Error("net/http's form of the same failure not recognised")
	}
	if !load.IsGoaway(errors.New("proxy error: ReverseProxy does an invalid Read on closed Body")) {
		t.Error("ReverseProxy's form of the same failure not recognised")
	}
	if load.IsGoaway(errors.New("connection refused")) || load.IsGoaway(nil) {
		t.Error("other errors taken for GOAWAY")
	}
}

func TestResultFileRoundTrip(t *testing.T) {
	want := &load.Result{Name: "x", TotalOperations: 3, FailedOperations: 1, GoawayErrors: 1, ErrorRate: 33.3,
		Start: time.Unix(1, 0).UTC(), End: time.Unix(2, 0).UTC(), SampleErrors: []string{"boom"}}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := want.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := load.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	if _, err := load.ReadFile(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, load.ErrResult) {
		t.Fatalf("missing file: err = %v, want ErrResult", err)
	}
}
