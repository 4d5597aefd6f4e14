// Package agentproc runs the vk-static binary as a separate process — for the end-to-end tests
// and the benchmark — on loopback with free ports, its own manifest directory, root directory
// and log file, and the node identity of an test/support/testenv control plane (or standalone).
// It reads the agent only from outside: /readyz and /metrics on its healthz port.
//
//	a, err := agentproc.Start(agentproc.Config{Binary: "bin/vk-static", Dir: dir, Node: "n1", Env: env})
//	err = a.WaitReady(ctx)
//	err = a.WriteManifest("web.yaml", data)
//	creates, err := a.Metric(ctx, "vk_static_provider_call_duration_seconds_count", map[string]string{"call": "CreatePod"})
//	err = a.Stop(20 * time.Second)
//
// In a test, StartInTest does all of that and the clean-up: the agent is ready when it returns,
// and stopped when the test ends (an unclean exit, a data race or a leaked container fails the
// test; a failed test prints the end of the agent's log). NodeName names a test's node,
// WritePod writes a pod as a JSON manifest and MirrorName names its mirror; test/support/podwait
// waits for the mirror.
//
//	a := agentproc.StartInTest(t, agentproc.Config{Binary: bin, Dir: t.TempDir(), Node: agentproc.NodeName(t), Env: env})
//	require.NoError(t, a.WritePod(pod))
//	podwait.Until(t, env.Admin, "default", a.MirrorName(pod.Name), time.Minute, "running", podwait.MainRunning)
//
// With --provider process the containers are host processes that outlive the agent (Kill is a
// kill -9 of the agent alone). ContainerProcesses finds what still runs for the containers of
// the agents under a directory (supervisors by their VK_STATIC_SUPERVISOR environment,
// workloads by their state.json pid and start time, and everything in their sessions);
// FindContainers finds the supervisors and workloads alone, by role (for the benchmark's
// figures); Workloads and ContainerWorkload read the recorded pids, and KillContainers is the
// clean-up of last resort. In a test that clean-up is FailOnLeaks: what it had to kill is a
// leak, and fails the test that left it.
//
//	a.Kill()
//	procs, err := agentproc.ContainerProcesses(a.Dir) // still running
//	c, err := agentproc.FindContainers(a.Dir, nil)    // c.Supervisors, c.Workloads
//	killed, err := agentproc.KillContainers(a.Dir)    // stop the agent first
//	t.Cleanup(func() { a.Stop(grace); agentproc.FailOnLeaks(t, a.Dir) })
package agentproc
