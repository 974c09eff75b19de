package fakeapi

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

var (
	configMapGVK     = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	configMapListGVK = corev1.SchemeGroupVersion.WithKind("ConfigMapList")
	deleteOptionsGVK = metav1.SchemeGroupVersion.WithKind("DeleteOptions")
)

// maxConfigMapBytes is the API server's limit on a ConfigMap's data.
const maxConfigMapBytes = corev1.MaxSecretSize

func (a *api) createConfigMap(w http.ResponseWriter, r *http.Request) {
	obj, err := decode(r, configMapGVK, false)
	if err != nil {
		respond(w, r, err)
		return
	}
	cm := obj.(*corev1.ConfigMap)
	ns := r.PathValue("ns")
	if cm.Namespace != "" && cm.Namespace != ns {
		respond(w, r, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	cm.Namespace = ns
	if cm.Name == "" && cm.GenerateName != "" {
		cm.Name = generateName(cm.GenerateName)
	}
	if err := validateConfigMap(cm); err != nil {
		respond(w, r, err)
		return
	}
	created, err := a.store.createConfigMap(cm)
	if err != nil {
		respond(w, r, err)
		return
	}
	created.SetGroupVersionKind(configMapGVK)
	responsewriters.WriteRawJSON(http.StatusCreated, created, w)
}

func validateConfigMap(cm *corev1.ConfigMap) error {
	if msgs := validation.IsDNS1123Subdomain(cm.Name); len(msgs) > 0 {
		return invalid(configMapGVK.GroupKind(), cm.Name, field.NewPath("metadata", "name"), msgs)
	}
	size := 0
	for k, v := range cm.Data {
		size += len(k) + len(v)
	}
	for k, v := range cm.BinaryData {
		size += len(k) + len(v)
	}
	if size > maxConfigMapBytes {
		return invalid(configMapGVK.GroupKind(), cm.Name, field.NewPath("data"),
			[]string{fmt.Sprintf("must have at most %d bytes", maxConfigMapBytes)})
	}
	return nil
}

func (a *api) getConfigMap(w http.ResponseWriter, r *http.Request) {
	cm, err := a.store.getConfigMap(r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		respond(w, r, err)
		return
	}
	cm.SetGroupVersionKind(configMapGVK)
	responsewriters.WriteRawJSON(http.StatusOK, cm, w)
}

func (a *api) listConfigMaps(w http.ResponseWriter, r *http.Request) {
	list := a.store.listConfigMaps(r.PathValue("ns"))
	list.SetGroupVersionKind(configMapListGVK)
	responsewriters.WriteRawJSON(http.StatusOK, list, w)
}

// deleteConfigMap checks that a body, when sent (client-go always sends
// DeleteOptions), decodes, and answers with the deleted object as the API
// server does.
func (a *api) deleteConfigMap(w http.ResponseWriter, r *http.Request) {
	if _, err := decode(r, deleteOptionsGVK, true); err != nil {
		respond(w, r, err)
		return
	}
	cm, err := a.store.deleteConfigMap(r.PathValue("ns"), r.PathValue("name"))
	if err != nil {
		respond(w, r, err)
		return
	}
	cm.SetGroupVersionKind(configMapGVK)
	responsewriters.WriteRawJSON(http.StatusOK, cm, w)
}
