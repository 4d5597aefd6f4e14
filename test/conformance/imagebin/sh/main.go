// Command sh is /bin/sh of make conformance's busybox look-alike image (test/conformance): it
// runs busybox's ash, except for `sh -c env`, which it runs as busybox's env directly.
//
// Why: the upstream image is busybox 1.37, whose ash passes environment variables with names
// that are not shell identifiers (such as "data-1", which the ConfigMap and Secret specs set)
// on to the commands it runs; Debian's busybox 1.35 drops them, and those specs then fail with
// any agent. bash keeps them but answers the read-only root filesystem spec with another
// message than ash does. Only the exact command those specs run is redirected.
package main

import (
	"fmt"
	"os"
	"syscall"
)

// busybox is the multi-call binary in the image.
const busybox = "/bin/busybox"

func main() {
	// argv[0] as given ("/bin/sh"): ash names itself with it in its messages, which specs
	// compare ("/bin/sh: can't create /file: Read-only file system").
	argv := os.Args
	if len(os.Args) == 3 && os.Args[1] == "-c" && os.Args[2] == "env" {
		argv = []string{"env"}
	}
	err := syscall.Exec(busybox, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "sh: exec %s: %v\n", busybox, err)
	os.Exit(127)
}
