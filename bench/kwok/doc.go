// Package kwok runs KWOK (sigs.k8s.io/kwok, v0.8) as a peer of the bench: one node, managed
// by one KWOK process, with KWOK's own fast stages, so vk-static's numbers have KWOK's beside
// them measured on the same control plane and load.
//
// Contract: Config is a KWOK configuration file holding the stages copied unchanged from
// KWOK v0.8.0's kustomize/stage/{node/fast,node/heartbeat-with-lease,pod/fast} (stages/, each
// with its licence header): the node turns Ready at once and heartbeats through its lease,
// pods turn Running in one status patch and terminating pods are deleted in one DELETE.
// RegisterNode creates the Node the way a KWOK user does (KWOK never creates nodes) and Args
// is KWOK's command line to manage that one node (--manage-single-node) and serve /healthz,
// /readyz and /debug/pprof on a loopback address. The KWOK binary itself is built by the
// Makefile from the separate module bench/tools, so that KWOK's dependencies never enter the
// agent's go.mod.
//
// bench/cmd/kwokpeer puts these together behind the command line vkbench gives every peer:
//
//	kwok.RegisterNode(ctx, adminClient, "node-a")
//	os.WriteFile(cfgPath, kwok.Config(), 0o644)
//	syscall.Exec(kwokBinary, kwok.Args(kwokBinary, kwok.Options{Kubeconfig: admin, Node: "node-a",
//		ServerAddress: "127.0.0.1:10248", ConfigPath: cfgPath}), os.Environ())
package kwok
