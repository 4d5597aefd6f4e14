package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

//go:generate go test -run ^TestCLIDocIsCurrent$ . -args -update-cli-doc

// writeCLIDoc writes docs/cli.md: the command line reference, from the flag definitions (the
// same flagSections --help prints), so that it cannot drift from them: TestCLIDocIsCurrent fails
// when it is stale, and `go generate ./cmd/vk-static/app` rewrites it.
func writeCLIDoc(w io.Writer) {
	fss := defaultOptions().flagSections()
	fmt.Fprint(w, "# vk-static command line\n\n")
	fmt.Fprint(w, "<!-- Generated from the flag definitions by `go generate ./cmd/vk-static/app`; do not edit. -->\n\n")
	fmt.Fprint(w, "```\n"+agentUsage+"```\n\n")
	fmt.Fprint(w, "Flags are the kubelet's where the kubelet has one. `--config` reads a kubelet "+
		"`KubeletConfiguration` file: the fields it applies are named beside their flags, and a flag given "+
		"on the command line wins over its field.\n")
	for _, name := range fss.Order {
		fs := fss.FlagSets[name]
		if !fs.HasFlags() {
			continue
		}
		fmt.Fprintf(w, "\n## %s\n\n", strings.ToUpper(name[:1])+name[1:])
		fmt.Fprint(w, "| Flag | Default | Description |\n|---|---|---|\n")
		fs.VisitAll(func(f *pflag.Flag) {
			typ, usage := pflag.UnquoteUsage(f)
			flag := "--" + f.Name
			if f.Shorthand != "" {
				flag = "-" + f.Shorthand + ", " + flag
			}
			if typ != "" {
				flag += " " + typ
			}
			def := ""
			if f.DefValue != "" && f.DefValue != "[]" {
				def = "`" + f.DefValue + "`"
			}
			fmt.Fprintf(w, "| `%s` | %s | %s |\n", flag, def, markdownCell(usage))
		})
	}
	fmt.Fprint(w, "\n## Subcommands\n\n")
	fmt.Fprint(w, "- `vk-static validate [--hostname-override NAME] FILE|DIR...` checks manifests as the agent "+
		"would (decoding, static-pod defaults, validation, restrictions, duplicate names across files) and prints "+
		"one line per problem, naming the file.\n")
	fmt.Fprint(w, "- `vk-static pods [--root-dir DIR] [--address IP] [--port PORT]` lists the pods a running agent "+
		"has bound to its node, as `kubectl get pods` does (NAME as namespace/name, READY, STATUS, RESTARTS, AGE) "+
		"with the SOURCE each came from (its manifest file or URL, or api).\n")
	fmt.Fprint(w, "- `vk-static logs POD [-c CONTAINER] [-f] [--tail N] [--timestamps] [--previous] [--root-dir DIR]` "+
		"prints a container's log, as `kubectl logs` does; POD is a name or namespace/name, the container the pod's "+
		"only one unless `-c` names it.\n")
	fmt.Fprint(w, "- `vk-static version` prints the version.\n")
	fmt.Fprint(w, "\n`pods` and `logs` read the agent's kubelet API as its local administrator, with the credential the agent "+
		"writes once it serves: `<root-dir>/pki/local-admin.kubeconfig` (0600, in a 0700 directory) — a client certificate "+
		"of a local CA (`<root-dir>/pki/local-admin-ca.crt`) for the user `vk-static:local-admin`, accepted beside "+
		"`--client-ca-file` and allowed everything without asking the API server, which does not know that user. They "+
		"verify the agent by the serving certificate the credential names. Standalone, the kubelet API is served on "+
		"127.0.0.1 to the local administrator only, unless `--client-ca-file` or `--anonymous-auth` (with "+
		"`--authorization-mode AlwaysAllow`) let others in.\n")
	fmt.Fprint(w, "\nA mistyped flag, a bad value or a stray argument, for the agent and every subcommand, is printed "+
		"naming it, with a pointer to `--help`, and exits with 2.\n")
	fmt.Fprint(w, "\n## Exit codes\n\n```\n"+exitCodes+"```\n")
}

// markdownCell makes text safe in a table cell.
func markdownCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "*", `\*`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	return strings.ReplaceAll(s, "\n", " ")
}
