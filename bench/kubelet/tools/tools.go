//go:build tools

// Package tools pins the kubelet, the cri-50 scenario's peer, so that go mod tidy keeps it.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kubelet"
)
