package app

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/vk-static/vk-static/cmd/vk-static/internal/cli"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/sources"
)

// validate checks manifests exactly as the file source would — decoding, static-pod defaults,
// validation, restrictions, and duplicate names across files — and prints one line per
// problem. The exit code is 0 when every manifest is good, 1 when any is not, 2 on bad usage.
func validate(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("vk-static validate", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	nodeName := fs.String("hostname-override", "", "Node name the static pods' names are derived from (default: the lowercased hostname).")
	fs.Usage = func() {
		fmt.Fprint(stdout, "Check manifests as the agent would (decoding, static-pod defaults, validation, restrictions,\nduplicate names across files), one line per problem.\n\nUsage:\n  vk-static validate [--hostname-override NAME] FILE|DIR...\n\nFlags:\n"+fs.FlagUsagesWrapped(cli.HelpColumns)+"\n"+exitCodes)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return cli.UsageError(stderr, "vk-static validate", err)
	}
	if fs.NArg() == 0 {
		return cli.UsageError(stderr, "vk-static validate", errors.New("no FILE or DIR to check"))
	}
	o := &options{HostnameOverride: *nodeName}
	name, err := o.nodeName()
	if err != nil {
		fmt.Fprintln(stderr, "vk-static validate:", err)
		return 2
	}

	problems, good := 0, 0
	seen := map[string]string{} // pod full name → file that has it
	for _, arg := range fs.Args() {
		if _, err := os.Stat(arg); err != nil {
			fmt.Fprintf(stdout, "%s: %v\n", arg, err)
			problems++
			continue
		}
		paths, err := sources.ManifestPaths(arg)
		if err != nil {
			fmt.Fprintf(stdout, "%s: %v\n", arg, err)
			problems++
			continue
		}
		for _, path := range paths {
			pods, err := sources.ReadManifestFile(path, name)
			if err != nil {
				for _, line := range problemLines(err) {
					fmt.Fprintln(stdout, line)
					problems++
				}
				continue
			}
			for _, pod := range pods {
				full := podutil.FullName(pod)
				if first, dup := seen[full]; dup {
					fmt.Fprintf(stdout, "%s: pod %s is already defined in %s; the agent would ignore this one\n", path, full, first)
					problems++
					continue
				}
				seen[full] = path
				good++
			}
		}
	}
	if problems > 0 {
		fmt.Fprintf(stderr, "%d problem(s); %d pod(s) valid\n", problems, good)
		return 1
	}
	fmt.Fprintf(stderr, "%d pod(s) valid\n", good)
	return 0
}

// problemLines is one line per problem; each names the file.
func problemLines(err error) []string {
	var de *sources.DecodeError
	if !errors.As(err, &de) {
		return []string{err.Error()}
	}
	lines := make([]string, 0, len(de.Problems))
	for _, p := range de.Problems {
		lines = append(lines, de.Location+": "+p.String())
	}
	return lines
}
