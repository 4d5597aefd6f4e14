package kubeletclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/vk-static/vk-static/cmd/vk-static/internal/cli"
	"github.com/vk-static/vk-static/podutil"
)

// podsUsage is `vk-static pods --help`'s text before the flags.
const podsUsage = `List the pods a running agent has bound to its node, as kubectl get pods does: static pods
(under their mirror's name when the agent has an API server) and API pods, with the manifest file
or URL each came from. Reads the agent's kubelet API as the local administrator, with the
credential the agent wrote under --root-dir.

Usage:
  vk-static pods [--root-dir DIR] [--address IP] [--port PORT]

Flags:
`

// clientExitCodes are the exit codes of the subcommands that talk to an agent.
const clientExitCodes = `Exit codes:
  0  done
  1  failure: the agent is not running, the credential cannot be read, the agent refused or
     does not know what was asked for
  2  usage: an unknown flag, a bad value, a missing or ambiguous argument
`

// Pods is `vk-static pods`: args are its flags, defaultRootDir the agent's --root-dir default.
func Pods(ctx context.Context, args []string, stdout, stderr io.Writer, defaultRootDir string) int {
	const name = "vk-static pods"
	var co clientOptions
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	co.addFlags(fs, defaultRootDir)
	fs.Usage = func() { fmt.Fprint(stdout, podsUsage+fs.FlagUsagesWrapped(cli.HelpColumns)+"\n"+clientExitCodes) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return cli.UsageError(stderr, name, err)
	}
	if fs.NArg() > 0 {
		return cli.UsageError(stderr, name, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	client, pods, err := co.open(ctx)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer client.close()
	if len(pods) == 0 {
		fmt.Fprintln(stderr, "No pods on this node.")
		return 0
	}
	manifestURL := ""
	for i := range pods {
		if pods[i].Annotations[podutil.ConfigSourceAnnotationKey] == podutil.HTTPSource {
			manifestURL = client.manifestURL(ctx)
			break
		}
	}
	now := time.Now()
	rows := make([]podRow, 0, len(pods))
	for i := range pods {
		rows = append(rows, podTableRow(&pods[i], now, manifestURL))
	}
	if err := writePodTable(stdout, rows); err != nil {
		return cli.Failure(stderr, name, err)
	}
	return 0
}
