//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAggregator runs Flunders through kube-apiserver's aggregator to a real aggregated API server, wardle
// (k8s.io/sample-apiserver with --goaway-chance), registered through an APIService: once through the stock
// kube-apiserver, whose aggregator fails some writes on the aggregated server's GOAWAY, and once through
// kube-apiserver-patched (aggregator/kube-aggregator.patch), which must fail none and apply none twice.
// kube-apiserver itself runs without --goaway-chance, so only the aggregator's hop meets GOAWAY.
func TestAggregator(t *testing.T) {
	if os.Getenv(envRun) != "1" {
		t.Skipf("the aggregator's test runs real kube-apiservers, etcd and sample-apiserver: run `make e2e` (or ./build.sh, then %s=1 go test -run TestAggregator -v -timeout 30m .) to run it", envRun)
	}
	start := time.Now()
	dir := outDir(t, "aggregator")
	load := func(c *cluster) flunderLoad {
		client, closeClient := c.newClient(t, nil)
		t.Cleanup(closeClient)
		return flunderLoad{url: c.url, client: client, workers: cfg.workers, ops: cfg.ops, largeEvery: 10, seed: uint64(time.Now().UnixNano())}
	}

	var rows []flunderOutcome
	for _, arm := range []struct{ name, binary string }{
		{"stock", "kube-apiserver"},
		{"patched", "kube-apiserver-patched"},
	} {
		t.Run(arm.name, func(t *testing.T) {
			armDir := filepath.Join(dir, arm.name)
			if err := os.MkdirAll(armDir, 0o755); err != nil {
				t.Fatal(err)
			}
			args, cert := aggregatorArgs(t, t.TempDir())
			c := startClusterWith(t, armDir, clusterOptions{binary: arm.binary, noGoaway: true, args: args})
			if v := flagValue(t, c.apiserver, "goaway-chance"); v != "0" {
				t.Fatalf("%s parsed --goaway-chance=%q, want 0: only the aggregator's hop may meet GOAWAY", arm.binary, v)
			}
			port := startWardle(t, c, armDir)
			registerWardle(t, c, port)
			// As in TestE2E/goaway-injector: Binomial(1000, 0.02) below 5 has a chance near 1e-5.
			goaways := wardleGoaways(t, port, cfg.probes, cert)
			t.Logf("%d sequential GETs straight to wardle: %d answered with a GOAWAY (chance %s)", cfg.probes, goaways, goawayChance)
			if low := int64(cfg.probes) / 200; goaways < low {
				t.Fatalf("only %d of %d GETs to wardle got a GOAWAY, want at least %d: its --goaway-chance looks off", goaways, cfg.probes, low)
			}

			o := load(c).run(t.Context(), arm.name)
			t.Log(o)
			for _, s := range o.Samples {
				t.Logf("failed: %s", s)
			}
			writeFile(t, filepath.Join(dir, arm.name+".json"), outcomeJSON(o))
			rows = append(rows, o)
			if o.Unfinished > 0 {
				t.Errorf("%d operations did not run within %v", o.Unfinished, loadTimeout)
			}
			if o.Duplicates > 0 {
				t.Errorf("%d writes were applied twice", o.Duplicates)
			}
			if arm.name == "stock" {
				// Without failures here the run proves nothing about the patch.
				if o.Failed == 0 || o.GoawayText == 0 {
					t.Errorf("the stock aggregator failed %d writes, %d of them naming GOAWAY: want some of both", o.Failed, o.GoawayText)
				}
			} else if o.Failed > 0 {
				t.Errorf("the patched aggregator failed %d writes, want 0", o.Failed)
			}
		})
	}
	table := aggregatorTable(rows)
	fmt.Printf("\n%s\n", table)
	writeFile(t, filepath.Join(dir, "table.md"), []byte(table))
	t.Logf("the aggregator's test took %v", time.Since(start).Round(time.Second))
}

// aggregatorTable is the Markdown table of the arms' outcomes, as docs/E2E.md records it.
func aggregatorTable(rows []flunderOutcome) string {
	var b strings.Builder
	b.WriteString("| kube-apiserver | writes | of them 64-250 KiB | failed | failed, 64-250 KiB | duplicates | sent again after 429 | seconds |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, o := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %.1f |\n",
			o.Arm, o.Writes, o.LargeWrites, o.Failed, o.LargeFailed, o.Duplicates, o.RetryLater, o.Seconds)
	}
	return b.String()
}
