//go:build tools

// Package tools pins the bench's peer binaries so that go mod tidy keeps them.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
