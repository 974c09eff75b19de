package fakeapi

import (
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// store keeps the objects in memory. Safe for concurrent use; objects go in
// and out as copies, so no caller shares one with another.
type store struct {
	mu         sync.Mutex
	rv         int64                                   // guarded by mu; the last resourceVersion handed out
	namespaces map[string]*corev1.Namespace            // guarded by mu; by name
	configMaps map[string]map[string]*corev1.ConfigMap // guarded by mu; by namespace, then name
}

func newStore() *store {
	s := &store{namespaces: map[string]*corev1.Namespace{}, configMaps: map[string]map[string]*corev1.ConfigMap{}}
	s.namespaces["default"] = s.stampLocked(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}).(*corev1.Namespace)
	return s
}

// stampLocked sets the server-owned metadata of a new object.
func (s *store) stampLocked(obj metav1.Object) metav1.Object {
	s.rv++
	obj.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	obj.SetUID(types.UID(uuid.NewUUID()))
	obj.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
	return obj
}

func (s *store) createNamespace(ns *corev1.Namespace) (*corev1.Namespace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.namespaces[ns.Name]; ok {
		return nil, apierrors.NewAlreadyExists(corev1.Resource("namespaces"), ns.Name)
	}
	ns = ns.DeepCopy()
	ns.Status.Phase = corev1.NamespaceActive
	s.stampLocked(ns)
	s.namespaces[ns.Name] = ns
	return ns.DeepCopy(), nil
}

func (s *store) getNamespace(name string) (*corev1.Namespace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns, ok := s.namespaces[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return ns.DeepCopy(), nil
}

func (s *store) listNamespaces() *corev1.NamespaceList {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := &corev1.NamespaceList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(s.rv, 10)}}
	for _, ns := range s.namespaces {
		list.Items = append(list.Items, *ns.DeepCopy())
	}
	return list
}

func (s *store) createConfigMap(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.namespaces[cm.Namespace]; !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), cm.Namespace)
	}
	byName := s.configMaps[cm.Namespace]
	if byName == nil {
		byName = map[string]*corev1.ConfigMap{}
		s.configMaps[cm.Namespace] = byName
	}
	if _, ok := byName[cm.Name]; ok {
		return nil, apierrors.NewAlreadyExists(corev1.Resource("configmaps"), cm.Name)
	}
	cm = cm.DeepCopy()
	s.stampLocked(cm)
	byName[cm.Name] = cm
	return cm.DeepCopy(), nil
}

func (s *store) getConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cm, ok := s.configMaps[ns][name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
	}
	return cm.DeepCopy(), nil
}

func (s *store) listConfigMaps(ns string) *corev1.ConfigMapList {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(s.rv, 10)}}
	for _, cm := range s.configMaps[ns] {
		list.Items = append(list.Items, *cm.DeepCopy())
	}
	return list
}

func (s *store) deleteConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cm, ok := s.configMaps[ns][name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
	}
	delete(s.configMaps[ns], name)
	return cm.DeepCopy(), nil
}
