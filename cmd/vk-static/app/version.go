package app

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/vk-static/vk-static/cmd/vk-static/internal/cli"
	"github.com/vk-static/vk-static/internal/version"
)

// printVersion is `vk-static version`: it takes no flags or arguments, and says so rather than
// ignoring them.
func printVersion(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("vk-static version", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stdout, "Print the version.\n\nUsage:\n  vk-static version\n\n"+exitCodes)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return cli.UsageError(stderr, "vk-static version", err)
	}
	if fs.NArg() > 0 {
		return cli.UsageError(stderr, "vk-static version", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	fmt.Fprintln(stdout, "vk-static", version.Version)
	return 0
}
