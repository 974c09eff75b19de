// Command wardle is k8s.io/sample-apiserver's server (wardle.example.com)
// with one more flag, --goaway-chance, which sample-apiserver's own command
// lacks: the chance, as kube-apiserver's flag of that name gives it, that
// the generic API server's filter answers an HTTP/2 request with GOAWAY.
// Every other flag and behaviour is sample-apiserver's.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"
	"k8s.io/sample-apiserver/pkg/cmd/server"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	o := server.NewWardleServerOptions(os.Stdout, os.Stderr)
	cmd := server.NewCommandStartWardleServer(ctx, o, false)
	var chance float64
	cmd.Flags().Float64Var(&chance, "goaway-chance", 0, "the chance, from 0 to 0.02, that an HTTP/2 request is answered with GOAWAY, as kube-apiserver's flag")
	// sample-apiserver's RunE, with the chance set in the generic server's
	// config between Config and New (RunWardleServer does both at once).
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if chance < 0 || chance > 0.02 {
			return fmt.Errorf("--goaway-chance=%v: want 0 to 0.02", chance)
		}
		if err := o.Complete(); err != nil {
			return err
		}
		if err := o.Validate(args); err != nil {
			return err
		}
		config, err := o.Config()
		if err != nil {
			return err
		}
		config.GenericConfig.GoawayChance = chance
		s, err := config.Complete().New()
		if err != nil {
			return err
		}
		s.GenericAPIServer.AddPostStartHookOrDie("start-sample-server-informers", func(hc genericapiserver.PostStartHookContext) error {
			config.GenericConfig.SharedInformerFactory.Start(hc.Done())
			o.SharedInformerFactory.Start(hc.Done())
			return nil
		})
		return s.GenericAPIServer.PrepareRun().RunWithContext(c.Context())
	}
	os.Exit(cli.Run(cmd))
}
