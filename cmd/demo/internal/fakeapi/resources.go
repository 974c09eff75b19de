package fakeapi

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	clienttesting "k8s.io/client-go/testing"
)

// resource is a kind of object the API serves: its objects live in the
// api's tracker; admit checks a new one (and may fill in fields).
type resource struct {
	gvr   schema.GroupVersionResource
	kind  string // an object's; a list's is kind + "List"
	admit func(obj runtime.Object, m metav1.Object) error
}

var (
	namespaces = resource{gvr: corev1.SchemeGroupVersion.WithResource("namespaces"), kind: "Namespace",
		admit: func(obj runtime.Object, m metav1.Object) error {
			obj.(*corev1.Namespace).Status.Phase = corev1.NamespaceActive
			return validName(m, "Namespace", validation.IsDNS1123Label)
		}}
	configMaps = resource{gvr: corev1.SchemeGroupVersion.WithResource("configmaps"), kind: "ConfigMap",
		admit: func(obj runtime.Object, m metav1.Object) error {
			if err := validName(m, "ConfigMap", validation.IsDNS1123Subdomain); err != nil {
				return err
			}
			cm, size := obj.(*corev1.ConfigMap), 0
			for k, v := range cm.Data {
				size += len(k) + len(v)
			}
			for k, v := range cm.BinaryData {
				size += len(k) + len(v)
			}
			if size > corev1.MaxSecretSize { // the API server's limit on a ConfigMap's data
				return invalid("ConfigMap", m.GetName(), field.NewPath("data"),
					[]string{fmt.Sprintf("must have at most %d bytes", corev1.MaxSecretSize)})
			}
			return nil
		}}
	deleteOptionsGVK = metav1.SchemeGroupVersion.WithKind("DeleteOptions")
)

// api serves the resources from tracker, client-go's object store (the one
// behind its fake clientsets), which keeps copies and answers the API's
// errors (NotFound, AlreadyExists); rv is the last resourceVersion handed
// out. Safe for concurrent use.
type api struct {
	tracker clienttesting.ObjectTracker
	rv      atomic.Int64
}

// stamp sets the metadata the server owns on a new object.
func (a *api) stamp(m metav1.Object) {
	m.SetResourceVersion(strconv.FormatInt(a.rv.Add(1), 10))
	m.SetUID(uuid.NewUUID())
	m.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
}

func (r resource) gvk(suffix string) schema.GroupVersionKind {
	return r.gvr.GroupVersion().WithKind(r.kind + suffix)
}

// write answers with obj as JSON, typed as r's kind with suffix ("" or "List").
func (r resource) write(w http.ResponseWriter, code int, obj runtime.Object, suffix string) {
	obj.GetObjectKind().SetGroupVersionKind(r.gvk(suffix))
	responsewriters.WriteRawJSON(code, obj, w)
}

// create stores the decoded body as a new object in the path's namespace
// ({ns}, none for a cluster-scoped resource), which must exist, with the
// metadata the server owns, and answers 201 with it.
func (a *api) create(res resource) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		obj, err := decode(r, res.gvk(""), false)
		if err != nil {
			respond(w, r, err)
			return
		}
		m, ns := obj.(metav1.Object), r.PathValue("ns")
		if m.GetNamespace() != "" && m.GetNamespace() != ns {
			respond(w, r, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
			return
		}
		m.SetNamespace(ns)
		if m.GetName() == "" && m.GetGenerateName() != "" {
			m.SetName(m.GetGenerateName() + utilrand.String(5)) // as the API server fills in generateName
		}
		if err := res.admit(obj, m); err != nil {
			respond(w, r, err)
			return
		}
		if ns != "" {
			if _, err := a.tracker.Get(namespaces.gvr, "", ns); err != nil {
				respond(w, r, err)
				return
			}
		}
		a.stamp(m)
		if err := a.tracker.Create(res.gvr, obj, ns); err != nil {
			respond(w, r, err)
			return
		}
		res.write(w, http.StatusCreated, obj, "")
	}
}

func (a *api) get(res resource) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		obj, err := a.tracker.Get(res.gvr, r.PathValue("ns"), r.PathValue("name"))
		if err != nil {
			respond(w, r, err)
			return
		}
		res.write(w, http.StatusOK, obj, "")
	}
}

func (a *api) list(res resource) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		list, err := a.tracker.List(res.gvr, res.gvk(""), r.PathValue("ns"))
		if err != nil {
			respond(w, r, err)
			return
		}
		res.write(w, http.StatusOK, list, "List")
	}
}

// delete checks that a body, when sent (client-go always sends
// DeleteOptions), decodes, and answers with the deleted object as the API
// server does.
func (a *api) delete(res resource) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := decode(r, deleteOptionsGVK, true); err != nil {
			respond(w, r, err)
			return
		}
		ns, name := r.PathValue("ns"), r.PathValue("name")
		obj, err := a.tracker.Get(res.gvr, ns, name)
		if err == nil {
			err = a.tracker.Delete(res.gvr, ns, name)
		}
		if err != nil {
			respond(w, r, err)
			return
		}
		res.write(w, http.StatusOK, obj, "")
	}
}

// validName is the API server's 422 for a name that check refuses.
func validName(m metav1.Object, kind string, check func(string) []string) error {
	if msgs := check(m.GetName()); len(msgs) > 0 {
		return invalid(kind, m.GetName(), field.NewPath("metadata", "name"), msgs)
	}
	return nil
}

// invalid is the API server's 422 for a field that fails validation.
func invalid(kind, name string, path *field.Path, msgs []string) error {
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(path, name, m))
	}
	return apierrors.NewInvalid(schema.GroupKind{Kind: kind}, name, errs)
}
