package load

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/teebody/teebody/cmd/demo/internal/kubeconfig"
)

// ErrSetup reports a run that could not start: no client, no server
// version, or no namespace.
var ErrSetup = errors.New("load: setup")

// opTimeout bounds one operation, so that a run always ends.
const opTimeout = 30 * time.Second

// payloadKey is the ConfigMap data key that holds the body.
const payloadKey = "payload"

// Run runs opts.Workers workers of opts.OpsPerWorker operations against
// target. One operation creates a ConfigMap of opts.BodySize bytes and
// deletes it, and fails when either fails. A failed operation is in the
// Result, not in the error: the error reports only a run that could not
// start (ErrSetup, ErrOptions), or ctx ending, in which case the Result
// holds the operations done until then. Run returns after every worker and
// the progress printer exited, with the run's connections closed.
func Run(ctx context.Context, target kubeconfig.Target, opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "load"
	}
	ns := cmp.Or(opts.Namespace, target.Namespace, DefaultNamespace)

	// setup has client-go's usual retries: only the operations run without.
	setup, err := newClient(target.Config, opts, false)
	if err != nil {
		return nil, err
	}
	defer setup.close()
	version, err := setup.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("%w: server version: %w", ErrSetup, err)
	}
	if err := ensureNamespace(ctx, setup, ns); err != nil {
		return nil, err
	}
	ops, err := newClient(target.Config, opts, opts.NoRetry)
	if err != nil {
		return nil, err
	}
	defer ops.close()

	r := &runner{
		setup:   setup,
		ops:     ops,
		ns:      ns,
		prefix:  "teebody-" + strings.ToLower(rand.Text()[:8]),
		payload: payload(opts.BodySize),
	}
	res := &Result{
		Name:          opts.Name,
		Workers:       opts.Workers,
		OpsPerWorker:  opts.OpsPerWorker,
		BodySize:      opts.BodySize,
		NoRetry:       opts.NoRetry,
		Context:       target.Context,
		ServerVersion: version.GitVersion,
		APIServerURL:  target.Config.Host,
		Start:         time.Now(),
	}
	var p *progress
	if opts.Progress != nil {
		p = startProgress(opts.Progress, opts.Terminal, opts.Name, opts.Workers*opts.OpsPerWorker, &r.done, &r.failed)
	}
	latencies := make([][]time.Duration, opts.Workers) // one slice per worker, owned by it
	// A failed operation is counted, not returned: a worker's error is only
	// ctx's end, which stops the others too.
	var g errgroup.Group
	for w := range opts.Workers {
		g.Go(func() error {
			for i := range opts.OpsPerWorker {
				if err := ctx.Err(); err != nil {
					return err
				}
				d, err := r.op(ctx, fmt.Sprintf("%s-%d-%d", r.prefix, w, i))
				if err != nil {
					r.fail(err)
				} else {
					latencies[w] = append(latencies[w], d)
				}
				r.done.Add(1)
			}
			return nil
		})
	}
	stopped := g.Wait()
	if stopped == nil {
		stopped = ctx.Err() // it ended during the last operations: some were cut short
	}
	res.End = time.Now()
	if p != nil {
		p.stop()
	}
	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l...)
	}
	res.SampleErrors = r.samples
	res.fill(all, int(r.failed.Load()), int(r.goaway.Load()))
	if stopped != nil {
		return res, fmt.Errorf("load: run stopped: %w", stopped)
	}
	return res, nil
}

// runner is one run's shared state. Its methods are safe for concurrent use
// by the workers.
type runner struct {
	setup, ops *client
	ns, prefix string
	payload    string

	done, failed, goaway atomic.Int64

	mu      sync.Mutex
	samples []string // guarded by mu; the first maxSampleErrors failures
	goaways []bool   // guarded by mu; whether each sample is a GOAWAY failure
}

func (r *runner) op(ctx context.Context, name string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	cms := r.ops.CoreV1().ConfigMaps(r.ns)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "teebody-demo"}},
		Data:       map[string]string{payloadKey: r.payload},
	}
	start := time.Now()
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		r.cleanup(ctx, name)
		return 0, fmt.Errorf("create configmap %s: %w", name, err)
	}
	if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		r.cleanup(ctx, name)
		return 0, fmt.Errorf("delete configmap %s: %w", name, err)
	}
	return time.Since(start), nil
}

// cleanup deletes what a failed operation may have left, with client-go's
// retries on; it is not part of the operation, and its failure is ignored.
func (r *runner) cleanup(ctx context.Context, name string) {
	_ = r.setup.CoreV1().ConfigMaps(r.ns).Delete(ctx, name, metav1.DeleteOptions{})
}

// fail counts a failed operation. The samples are the first failures, but
// the first failure of the other kind (GOAWAY or not) always gets in, so
// that a rare kind is not hidden behind a frequent one.
func (r *runner) fail(err error) {
	r.failed.Add(1)
	goaway := isGoawayFailure(err)
	if goaway {
		r.goaway.Add(1)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case len(r.samples) < maxSampleErrors:
		r.samples = append(r.samples, err.Error())
		r.goaways = append(r.goaways, goaway)
	case !slices.Contains(r.goaways, goaway):
		r.samples[len(r.samples)-1] = err.Error()
		r.goaways[len(r.goaways)-1] = goaway
	}
}

func ensureNamespace(ctx context.Context, c *client, ns string) error {
	_, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case err == nil, apierrors.IsForbidden(err):
		// Forbidden: a user who may not read namespaces may still write in one.
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("%w: namespace %s: %w", ErrSetup, ns, err)
	}
	_, err = c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%w: create namespace %s: %w", ErrSetup, ns, err)
	}
	return nil
}

// payload is n bytes of printable text.
func payload(n int) string {
	const pattern = "teebody replays request bodies. "
	return strings.Repeat(pattern, n/len(pattern)+1)[:n]
}
