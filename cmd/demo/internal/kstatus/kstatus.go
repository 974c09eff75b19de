// Package kstatus writes Kubernetes Status objects as HTTP responses, the
// shape client-go turns into typed errors (apierrors.IsNotFound and friends).
package kstatus

import (
	"encoding/json"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Write answers with status as JSON and status.Code as the HTTP status
// (500 when the code is unset). It fills in the Status type meta. It is safe
// for concurrent use; a failed write to w is ignored, as the client is gone.
func Write(w http.ResponseWriter, status metav1.Status) {
	status.Kind = "Status"
	status.APIVersion = "v1"
	if status.Status == "" {
		status.Status = metav1.StatusFailure
	}
	if status.Code == 0 {
		status.Code = http.StatusInternalServerError
	}
	body, err := json.Marshal(status)
	if err != nil {
		// A Status of strings and integers always marshals; keep the answer
		// a valid Status all the same.
		body = []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(body)
}

// WriteError answers with err's Status: the StatusError's own when err is
// one (apierrors.NewNotFound and friends), else a 500 InternalError.
func WriteError(w http.ResponseWriter, err error) {
	if s, ok := err.(apierrors.APIStatus); ok {
		Write(w, s.Status())
		return
	}
	Write(w, apierrors.NewInternalError(err).ErrStatus)
}
