// Package version holds the agent's version, set at link time by the Makefile.
package version

// Version is overridden with -ldflags "-X github.com/vk-static/vk-static/internal/version.Version=...".
var Version = "v0.0.0-dev"
