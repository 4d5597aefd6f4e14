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
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/bench/agentflags"
	"github.com/vk-static/vk-static/bench/floor"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "crifloor:", err)
		os.Exit(1)
	}
}

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
	cfg, err := clientcmd.BuildConfigFromFlags("", f.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(f.QPS), f.Burst
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "vkbench-crifloor"
	client, err := kubernetes.NewForConfig(cfg)
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())
	a := &floor.CRIAgent{Client: client, Runtime: runtimeapi.NewRuntimeServiceClient(conn), Node: f.Node, ManifestDir: f.ManifestDir}

	srv, err := floor.ServeHealth(f.HealthzAddr, f.HealthzPort, f.Profiling, a.Ready)
	if err != nil {
		return err
	}
	defer srv.Close()
	return a.Run(ctx)
}
