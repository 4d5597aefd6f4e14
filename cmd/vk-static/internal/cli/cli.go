package cli

import (
	"fmt"
	"io"
)

// HelpColumns is where --help wraps the flags' descriptions.
const HelpColumns = 100

// UsageError prints a command-line mistake, naming the flag or argument (pflag's
// ContinueOnError returns the error without printing it), with a pointer to --help, and returns
// the usage exit code 2.
func UsageError(stderr io.Writer, command string, err error) int {
	fmt.Fprintf(stderr, "%s: %v\nSee '%s --help'.\n", command, err, command)
	return 2
}

// Failure prints a runtime failure and returns its exit code, 1.
func Failure(stderr io.Writer, command string, err error) int {
	fmt.Fprintf(stderr, "%s: %v\n", command, err)
	return 1
}
