// Package bench measures vk-static the way a user feels it: how long until a thousand pods
// bound to the node are Running, how much CPU and memory the agent spends on them, how many
// API writes each pod start costs, how quickly a manifest edit reaches the provider, and how
// quiet the agent is when nothing changes.
//
// Contract: the agent under test is the built binary (bin/vk-static) running as its own
// process with its node identity (system:node:<name>) against the real control plane from
// test/support/testenv. Load reaches it only through the API server (pods bound to its node, and
// for api-latency their pods/log and pods/exec, which the API server passes to the agent's
// kubelet API with its kubelet client certificate) and its manifest directory; the harness reads the agent only from the outside: /proc for CPU
// and peak RSS, its healthz port for /metrics, its kubelet API (as its local administrator) for
// /debug/pprof with profiling — the peers serve that on their healthz port — and the API
// server's own apiserver_request_total and flow-control counters for request counts.
// Every scenario but process-100 runs the agent with the mock provider. process-100 runs
// real processes with --provider process. It also reads the supervisors and workloads from
// outside: it finds them in /proc (by their environment and by the pid and start time that
// the state files under the agent's --root-dir record). A process left after its pod is gone
// fails the scenario. The harness kills whatever container processes a scenario leaves, so
// that none outlives it, and what it had to kill fails the run.
// With peers (vkbench -peers floor,kwok -rounds N, as make bench runs it), a scenario that
// applies (Scenario.Peers: api-1k and api-10k with the floor and KWOK, static-1k with the floor
// only, as KWOK has no static pods) runs N rounds alternating vk-static and each peer on the
// same control plane, a fresh node name and namespace per run, and WritePeerTable prints their
// medians side by side with vk-static's ratio to each peer, every round's all Running and the
// goals of issues 14 and 28 judged on those same-run ratios. The floor (bench/floor) is the least work
// any agent can do: one informer, one status patch and one DELETE per pod, one mirror create
// per manifest. KWOK (bench/kwok, started through bench/cmd/kwokpeer) runs with its own fast
// stages and the admin identity, as its controllers list leases, which a node may not.
// cri-50 applies with the kubelet itself (bench/kubelet, started through bench/cmd/kubeletpeer
// on a containerd of the same configuration, one fresh containerd per run): the kubelet
// refuses a loopback node IP, so vkbench -peers kubelet runs everything in a network namespace
// of its own (test/support/netns) and Runner.NodeIP gives every agent its second address on lo.
// cri-50 also applies with the CRI floor (bench/floor's CRIAgent through bench/cmd/crifloor):
// RunPodSandbox, CreateContainer and StartContainer per pod, all at once, beside the mirror's
// create, then one status patch. Every cri-50 agent reaches containerd through the same timing
// proxy (bench/criproxy), so CRIResult.StartCalls holds each agent's CRI calls by method
// (count, percentiles, most in flight at once, histogram) measured by one instrument.
// agents-20 runs 20 agents with node identities of their own on one control plane and reports
// the API requests per second each costs, at rest and under load, beside their CPU and RSS.
// Performance is reported, never asserted: Result.Goals says which issue-6 goal was met.
// A run that did not do the work it measures — a pod never seen Running or deleted, the agent
// or peer gone before the harness stopped it, a scenario error — is kept with what it measured
// but marked failed (Result.Error): medians and ratios leave it out, the tables name it, Compare
// returns an error for it (ReadJSON marks such runs in files written before the mark existed),
// and vkbench exits non-zero.
//
// Smallest use (what cmd/vkbench does):
//
//	env, _ := testenv.Start(ctx, testenv.Options{})
//	defer env.Stop(false)
//	r := &bench.Runner{Env: env, AgentBinary: "bin/vk-static", WorkDir: dir}
//	res, err := r.Run(ctx, bench.Scenarios()["api-1k"])
//	bench.WriteTable(os.Stdout, []*bench.Result{res})
package bench
