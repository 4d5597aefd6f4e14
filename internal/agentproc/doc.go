// Package agentproc runs the vk-static binary as a separate process — for the end-to-end tests
// and the benchmark — on loopback with free ports, its own manifest directory, root directory
// and log file, and the node identity of an internal/testenv control plane (or standalone).
// It reads the agent only from outside: /readyz and /metrics on its healthz port.
//
//	a, err := agentproc.Start(agentproc.Config{Binary: "bin/vk-static", Dir: dir, Node: "n1", Env: env})
//	err = a.WaitReady(ctx)
//	err = a.WriteManifest("web.yaml", data)
//	creates, err := a.Metric(ctx, "vk_static_provider_call_duration_seconds_count", map[string]string{"call": "CreatePod"})
//	err = a.Stop(20 * time.Second)
package agentproc
