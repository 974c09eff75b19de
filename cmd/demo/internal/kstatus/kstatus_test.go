package kstatus_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/teebody/teebody/cmd/demo/internal/kstatus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// decode reads a written Status back as client-go does.
func decode(t *testing.T, rec *httptest.ResponseRecorder) error {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var st metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" || int(st.Code) != rec.Code {
		t.Fatalf("status %+v with HTTP %d", st, rec.Code)
	}
	return &apierrors.StatusError{ErrStatus: st}
}

func TestWriteError(t *testing.T) {
	rec := httptest.NewRecorder()
	kstatus.WriteError(rec, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "x"))
	if err := decode(t, rec); rec.Code != http.StatusNotFound || !apierrors.IsNotFound(err) {
		t.Fatalf("%d %v, want a 404 NotFound", rec.Code, err)
	}
	rec = httptest.NewRecorder()
	kstatus.WriteError(rec, errors.New("boom"))
	if err := decode(t, rec); rec.Code != http.StatusInternalServerError || !apierrors.IsInternalError(err) {
		t.Fatalf("%d %v, want a 500 InternalError", rec.Code, err)
	}
}

func TestWriteDefaults(t *testing.T) {
	rec := httptest.NewRecorder()
	kstatus.Write(rec, metav1.Status{Message: "m"})
	err := decode(t, rec)
	if rec.Code != http.StatusInternalServerError || err.Error() != "m" {
		t.Fatalf("%d %v", rec.Code, err)
	}
}
