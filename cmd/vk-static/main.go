// Command vk-static is the node agent: it runs static pods from a manifest directory and a
// manifest URL, and pods the API server schedules to its node, on a provider, with mirror pods
// so the cluster sees them all.
//
//	vk-static [flags]                 run the agent
//	vk-static validate FILE|DIR...    check manifests as the agent would, one line per problem
//	vk-static pods                    list the pods a running agent runs
//	vk-static logs POD [-c C] [-f]    print a container's log
//	vk-static version                 print the version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/runtime/process"
)

func main() {
	// Without vk-static-supervisor beside it, the process provider's container supervisors
	// are this binary, re-executed: before anything else, become one if asked to.
	process.RunSupervisorIfRequested()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "version":
			return printVersion(args[1:], stdout, stderr)
		case "validate":
			return validate(args[1:], stdout, stderr)
		case "pods":
			return podsCommand(context.Background(), args[1:], stdout, stderr)
		case "logs":
			return logsCommand(context.Background(), args[1:], stdout, stderr)
		}
	}

	opts := defaultOptions()
	fs := opts.agentFlagSet(stdout, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return usageError(stderr, "vk-static", err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "vk-static", fmt.Errorf("unexpected argument %q (subcommands: validate, pods, logs, version)", fs.Arg(0)))
	}
	if opts.Config != "" {
		if err := applyConfigFile(opts.Config, opts, fs); err != nil {
			return usageError(stderr, "vk-static", err)
		}
	}
	if err := opts.validate(); err != nil {
		return usageError(stderr, "vk-static", err)
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

// usageError prints a command-line mistake, naming the flag or argument (pflag's ContinueOnError
// returns the error without printing it), with a pointer to --help, and returns the usage exit
// code 2.
func usageError(stderr io.Writer, command string, err error) int {
	fmt.Fprintf(stderr, "%s: %v\nSee '%s --help'.\n", command, err, command)
	return 2
}
