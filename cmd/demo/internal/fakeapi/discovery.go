package fakeapi

import (
	"net/http"
	"runtime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
)

func getVersion(w http.ResponseWriter, _ *http.Request) {
	responsewriters.WriteRawJSON(http.StatusOK, &version.Info{
		Major:      "1",
		Minor:      "37",
		GitVersion: GitVersion,
		GoVersion:  runtime.Version(),
		Compiler:   runtime.Compiler,
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	}, w)
}

func apiVersions(w http.ResponseWriter, r *http.Request) {
	responsewriters.WriteRawJSON(http.StatusOK, &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
		},
	}, w)
}

func apiGroups(w http.ResponseWriter, _ *http.Request) {
	responsewriters.WriteRawJSON(http.StatusOK, &metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   []metav1.APIGroup{},
	}, w)
}

func apiResources(w http.ResponseWriter, _ *http.Request) {
	responsewriters.WriteRawJSON(http.StatusOK, &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{
			{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap",
				Verbs: metav1.Verbs{"create", "delete", "get", "list"}, ShortNames: []string{"cm"}},
			{Name: "namespaces", SingularName: "namespace", Namespaced: false, Kind: "Namespace",
				Verbs: metav1.Verbs{"create", "get", "list"}, ShortNames: []string{"ns"}},
		},
	}, w)
}
