package agentflags

import (
	"fmt"
	"os"
)

// Main runs a peer's command line and exits 1 with the error, named, when it fails.
func Main(name string, run func(args []string) error) {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
