package fakeapi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStoreHandsOutCopies: what a caller does to an object it passed in or
// got back never changes the one the store keeps.
func TestStoreHandsOutCopies(t *testing.T) {
	s := newStore()
	in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}, Data: map[string]string{"k": "v"}}
	created, err := s.createConfigMap(in)
	if err != nil {
		t.Fatal(err)
	}
	kept := s.configMaps["default"]["a"]
	got, err := s.getConfigMap("default", "a")
	if err != nil {
		t.Fatal(err)
	}
	list := s.listConfigMaps("default")
	deleted, err := s.deleteConfigMap("default", "a")
	if err != nil {
		t.Fatal(err)
	}
	for name, cm := range map[string]*corev1.ConfigMap{"passed in": in, "created": created, "got": got, "listed": &list.Items[0], "deleted": deleted} {
		cm.Data["k"] = name
		if v := kept.Data["k"]; v != "v" {
			t.Errorf("changing the object %s changed the kept one: %q", name, v)
		}
	}
}
