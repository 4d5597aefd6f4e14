// Package kubeletclient is the command line of a running agent's kubelet API: `vk-static pods`
// and `vk-static logs`, which read it as the local administrator with the credential the agent
// wrote under its --root-dir, as kubectl get pods and kubectl logs would. It is apart from
// package app because it shares nothing with the agent but the default --root-dir.
package kubeletclient
