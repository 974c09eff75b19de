// Package kubeconfig writes the kubeconfig files by which the demo's servers
// hand their address and credentials to clients, loads kubeconfigs into
// client-go configs, and gives each user of such a config connections of
// its own (Isolated).
package kubeconfig

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ErrKubeconfig reports a kubeconfig that could not be written or loaded.
var ErrKubeconfig = errors.New("kubeconfig")

// Spec is what a written kubeconfig holds: one cluster, user and context,
// all called Name, which is also the current context.
type Spec struct {
	Name      string
	Server    string // https://host:port
	CAData    []byte // PEM
	Token     string // bearer token; empty for none
	Namespace string // the context's default namespace; empty for none
}

// Write writes spec to path atomically (a temporary file renamed over it),
// readable by the owner only, so that a reader that waits for the file never
// sees half of it. On failure path is unchanged.
func Write(path string, spec Spec) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[spec.Name] = &clientcmdapi.Cluster{Server: spec.Server, CertificateAuthorityData: spec.CAData}
	cfg.AuthInfos[spec.Name] = &clientcmdapi.AuthInfo{Token: spec.Token}
	cfg.Contexts[spec.Name] = &clientcmdapi.Context{Cluster: spec.Name, AuthInfo: spec.Name, Namespace: spec.Namespace}
	cfg.CurrentContext = spec.Name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKubeconfig, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKubeconfig, err)
	}
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("%w: %w", ErrKubeconfig, err)
	}
	return nil
}

// Target is a loaded kubeconfig: the client config, and what a report names.
type Target struct {
	Config    *rest.Config
	Context   string // the context used
	Namespace string // the context's namespace; empty when it names none
}

// Load reads the kubeconfig at path (empty: the usual KUBECONFIG and
// ~/.kube/config rules) with context (empty: the current context).
func Load(path, context string) (Target, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return Target{}, fmt.Errorf("%w: %w", ErrKubeconfig, err)
	}
	raw, err := cc.RawConfig()
	if err != nil {
		return Target{}, fmt.Errorf("%w: %w", ErrKubeconfig, err)
	}
	if context == "" {
		context = raw.CurrentContext
	}
	ns := ""
	if c, ok := raw.Contexts[context]; ok {
		ns = c.Namespace
	}
	return Target{Config: cfg, Context: context, Namespace: ns}, nil
}

// Isolated returns a copy of cfg for which client-go builds a transport of
// its own, whose idle connections the caller can close, instead of sharing
// one from its process-wide cache, which is never closed: client-go caches
// only the transports of configs without a Proxy function, so the copy gets
// client-go's default one, http.ProxyFromEnvironment, when it has none.
func Isolated(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if cfg.Proxy == nil {
		cfg.Proxy = http.ProxyFromEnvironment
	}
	return cfg
}
