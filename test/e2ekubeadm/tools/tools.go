//go:build tools

// Package tools pins kubeadm and kube-scheduler, which test/e2ekubeadm runs, so that go mod
// tidy keeps them.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubeadm"
)
