// Package childproc runs a helper program of the tests — etcd, kube-apiserver,
// kube-controller-manager, containerd, kube-scheduler, the kubelet, ginkgo — as a child of the
// test run: its output appended to a log file, in a process group of its own, and killed with
// the run (Pdeathsig) even when the run dies before its clean-up.
//
//	p, err := childproc.Start(childproc.Options{Name: "etcd", LogPath: dir + "/etcd.log"}, etcd, args...)
//	if p.Exited() { return fmt.Errorf("etcd exited: %v", p.Err()) }
//	p.Stop(5 * time.Second) // SIGTERM, SIGKILL after 5 s; Stop(0) is SIGKILL at once
//
// The agent under test is not one of these: test/support/agentproc runs it, and judges how it
// exits.
package childproc
