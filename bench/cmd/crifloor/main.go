// Command crifloor runs bench/floor's CRIAgent: the least work any node agent must do to run
// static pods on a CRI runtime, for vkbench's -peers crifloor (cri-50). It takes vk-static's
// flags as test/support/agentproc passes them (it uses the identity, the healthz address, the
// rate, profiling, the manifests and --container-runtime-endpoint; the others are accepted
// and ignored), serves /readyz and /healthz on the healthz port, and with --profiling
// /debug/pprof there too.
package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/bench/agentflags"
	"github.com/vk-static/vk-static/bench/floor"
)

func main() { agentflags.Main("crifloor", run) }

func run(args []string) error {
	f := agentflags.Defaults()
	fs := flag.NewFlagSet("crifloor", flag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.Kubeconfig == "" || f.Node == "" || f.ManifestDir == "" || f.RuntimeEndpoint == "" {
		return errors.New("--kubeconfig, --hostname-override, --pod-manifest-path and --container-runtime-endpoint are required")
	}
	client, err := f.Client("vkbench-crifloor")
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(f.RuntimeEndpoint, "unix://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("localhost"),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}))
	if err != nil {
		return err
	}
	defer conn.Close()
	a := &floor.CRIAgent{Client: client, Runtime: runtimeapi.NewRuntimeServiceClient(conn), Node: f.Node, ManifestDir: f.ManifestDir}
	return floor.Serve(f, a.Ready, func(ctx context.Context) error { return a.Run(ctx) })
}
