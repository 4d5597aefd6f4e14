// Package cli holds the conventions every vk-static subcommand shares: its exit codes and the
// width its --help wraps at.
package cli
