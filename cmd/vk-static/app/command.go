package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/cmd/vk-static/internal/cli"
	"github.com/vk-static/vk-static/cmd/vk-static/kubeletclient"
)

// Run is the vk-static command line args (without the program name): it runs the agent or a
// subcommand and returns the exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "version":
			return printVersion(args[1:], stdout, stderr)
		case "validate":
			return validate(args[1:], stdout, stderr)
		case "pods":
			return kubeletclient.Pods(context.Background(), args[1:], stdout, stderr, defaultOptions().RootDir)
		case "logs":
			return kubeletclient.Logs(context.Background(), args[1:], stdout, stderr, defaultOptions().RootDir)
		}
	}

	opts := defaultOptions()
	fs := opts.agentFlagSet(stdout, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return cli.UsageError(stderr, "vk-static", err)
	}
	if fs.NArg() > 0 {
		return cli.UsageError(stderr, "vk-static", fmt.Errorf("unexpected argument %q (subcommands: validate, pods, logs, version)", fs.Arg(0)))
	}
	if opts.Config != "" {
		if err := applyConfigFile(opts.Config, opts, fs); err != nil {
			return cli.UsageError(stderr, "vk-static", err)
		}
	}
	if err := opts.validate(); err != nil {
		return cli.UsageError(stderr, "vk-static", err)
	}
	defer klog.Flush()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := klog.Background().WithName("vk-static")
	ctx = klog.NewContext(ctx, logger)
	if err := runAgent(ctx, opts); err != nil {
		logger.Error(err, "Agent failed")
		return 1
	}
	logger.Info("Agent stopped")
	return 0
}
