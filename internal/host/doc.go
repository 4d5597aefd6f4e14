// Package host reads what a node agent running real workloads reports about its machine: the
// Node's capacity (CPUs, memory, the root directory's filesystem) and allocatable (capacity
// minus what is reserved for the system and the agent), and the node's CPU and memory use for
// the Summary API — from /proc and statfs, with no dependency — with, on cgroup v2, the
// machine's pressure stall information (/proc/pressure, package psi).
//
//	capacity, err := host.Capacity("/var/lib/vk-static", 110)
//	allocatable := host.Allocatable(capacity, systemReserved, kubeReserved)
package host
