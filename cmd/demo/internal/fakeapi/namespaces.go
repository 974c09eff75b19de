package fakeapi

import (
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/teebody/teebody/cmd/demo/internal/kstatus"
)

var (
	namespaceGVK     = corev1.SchemeGroupVersion.WithKind("Namespace")
	namespaceListGVK = corev1.SchemeGroupVersion.WithKind("NamespaceList")
)

func (a *api) createNamespace(w http.ResponseWriter, r *http.Request) {
	obj, err := decode(r, namespaceGVK, false)
	if err != nil {
		kstatus.WriteError(w, err)
		return
	}
	ns := obj.(*corev1.Namespace)
	if ns.Name == "" && ns.GenerateName != "" {
		ns.Name = generateName(ns.GenerateName)
	}
	if msgs := validation.IsDNS1123Label(ns.Name); len(msgs) > 0 {
		kstatus.WriteError(w, invalid(namespaceGVK.GroupKind(), ns.Name, field.NewPath("metadata", "name"), msgs))
		return
	}
	created, err := a.store.createNamespace(ns)
	if err != nil {
		kstatus.WriteError(w, err)
		return
	}
	created.SetGroupVersionKind(namespaceGVK)
	writeJSON(w, http.StatusCreated, created)
}

func (a *api) getNamespace(w http.ResponseWriter, r *http.Request) {
	ns, err := a.store.getNamespace(r.PathValue("ns"))
	if err != nil {
		kstatus.WriteError(w, err)
		return
	}
	ns.SetGroupVersionKind(namespaceGVK)
	writeJSON(w, http.StatusOK, ns)
}

func (a *api) listNamespaces(w http.ResponseWriter, _ *http.Request) {
	list := a.store.listNamespaces()
	list.SetGroupVersionKind(namespaceListGVK)
	writeJSON(w, http.StatusOK, list)
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
