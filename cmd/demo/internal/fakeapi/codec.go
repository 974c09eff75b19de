package fakeapi

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// decodable are the media types the server decodes, as the API server does
// for core objects. CBOR is refused with 415, which makes client-go fall
// back to JSON.
var decodable = map[string]bool{
	"application/json":                    true,
	"application/yaml":                    true,
	"application/vnd.kubernetes.protobuf": true,
}

// decode reads r's body (already limited to maxBodyBytes) into a new object
// of kind want. An empty body with optional set decodes to nil, nil. The
// error is a Status error to answer with; the body must be exactly one
// object of that kind, so a truncated or mixed-up body is caught.
func decode(r *http.Request, want schema.GroupVersionKind, optional bool) (runtime.Object, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, errTooLarge()
		}
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(body) == 0 {
		if optional {
			return nil, nil
		}
		return nil, apierrors.NewBadRequest("the request body is empty")
	}
	media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !decodable[media] {
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusUnsupportedMediaType,
			Reason:  metav1.StatusReasonUnsupportedMediaType,
			Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got %q)", r.Header.Get("Content-Type")),
		}}
	}
	obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(body, &want, nil)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body does not decode: %v", err))
	}
	// Kind only: client-go sends DeleteOptions under the client's own group
	// version, and the scheme maps it there.
	if gvk.Kind != want.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %s, not a %s", gvk.Kind, want.Kind))
	}
	return obj, nil
}
