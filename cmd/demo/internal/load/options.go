// Package load is the demo's load generator: workers that each create a
// ConfigMap and delete it, over and over, through client-go, and count what
// failed, and how.
package load

import (
	"errors"
	"fmt"
	"io"
)

// ErrOptions reports options that cannot make a run.
var ErrOptions = errors.New("load: options")

// DefaultNamespace is used when neither the options nor the kubeconfig
// context name a namespace.
const DefaultNamespace = "teebody-demo"

// Options configure a run. The zero value is not valid: Workers and
// OpsPerWorker must be set.
type Options struct {
	Name         string  // the result's name; "load" when empty
	Namespace    string  // where the ConfigMaps go, created when missing; empty: the context's, else DefaultNamespace
	Workers      int     // concurrent workers, >= 1
	OpsPerWorker int     // operations per worker, >= 1
	BodySize     int     // bytes of ConfigMap data per object, 0 to maxBodySize
	QPS          float32 // client-go's rate limit; 0: client-go's default (5); < 0: none
	Burst        int     // client-go's burst; 0: client-go's default (10)
	NoRetry      bool    // clear GetBody on each request, so a GOAWAY cannot be retried
	Progress     io.Writer
	Terminal     bool // Progress is a terminal: one line rewritten in place, else a line every 10%
}

// maxBodySize is the largest BodySize: the API server refuses a ConfigMap
// whose data keys and values add up to more than 1 MiB.
const maxBodySize = 1<<20 - len(payloadKey)

// Validate reports options that cannot make a run, wrapping ErrOptions.
func (o Options) Validate() error {
	switch {
	case o.Workers < 1:
		return fmt.Errorf("%w: workers must be at least 1, not %d", ErrOptions, o.Workers)
	case o.OpsPerWorker < 1:
		return fmt.Errorf("%w: ops per worker must be at least 1, not %d", ErrOptions, o.OpsPerWorker)
	case o.BodySize < 0 || o.BodySize > maxBodySize:
		return fmt.Errorf("%w: body size must be between 0 and %d bytes, not %d", ErrOptions, maxBodySize, o.BodySize)
	case o.Burst < 0:
		return fmt.Errorf("%w: burst must not be negative, not %d", ErrOptions, o.Burst)
	}
	return nil
}
