package fakeapi

import (
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

var (
	namespaceGVK     = corev1.SchemeGroupVersion.WithKind("Namespace")
	namespaceListGVK = corev1.SchemeGroupVersion.WithKind("NamespaceList")
)

func (a *api) createNamespace(w http.ResponseWriter, r *http.Request) {
	obj, err := decode(r, namespaceGVK, false)
	if err != nil {
		respond(w, r, err)
		return
	}
	ns := obj.(*corev1.Namespace)
	if ns.Name == "" && ns.GenerateName != "" {
		ns.Name = generateName(ns.GenerateName)
	}
	if msgs := validation.IsDNS1123Label(ns.Name); len(msgs) > 0 {
		respond(w, r, invalid(namespaceGVK.GroupKind(), ns.Name, field.NewPath("metadata", "name"), msgs))
		return
	}
	created, err := a.store.createNamespace(ns)
	if err != nil {
		respond(w, r, err)
		return
	}
	created.SetGroupVersionKind(namespaceGVK)
	responsewriters.WriteRawJSON(http.StatusCreated, created, w)
}

func (a *api) getNamespace(w http.ResponseWriter, r *http.Request) {
	ns, err := a.store.getNamespace(r.PathValue("ns"))
	if err != nil {
		respond(w, r, err)
		return
	}
	ns.SetGroupVersionKind(namespaceGVK)
	responsewriters.WriteRawJSON(http.StatusOK, ns, w)
}

func (a *api) listNamespaces(w http.ResponseWriter, _ *http.Request) {
	list := a.store.listNamespaces()
	list.SetGroupVersionKind(namespaceListGVK)
	responsewriters.WriteRawJSON(http.StatusOK, list, w)
}

// invalid is the API server's 422 for a field that fails validation.
func invalid(kind schema.GroupKind, name string, path *field.Path, msgs []string) error {
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(path, name, m))
	}
	return apierrors.NewInvalid(kind, name, errs)
}

// generateName appends five random characters to prefix, as the API server
// does for metadata.generateName.
func generateName(prefix string) string {
	return prefix + utilrand.String(5)
}
