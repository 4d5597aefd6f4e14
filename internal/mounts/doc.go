// Package mounts finds and detaches the mounts below a directory, from /proc/self/mountinfo:
// what a throwaway containerd (test/support/testcontainerd: overlay root filesystems, sandboxes'
// /dev/shm, network namespaces) or the bench's kubelet (its root directory, a shared bind
// mount of itself) leave under their directories, which must go before the directories do;
// RemoveAll, which never deletes through a mount (the agent's pod directories); and how
// mountinfo escapes its paths, which the agent's volume checks read too.
package mounts
