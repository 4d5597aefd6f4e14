// Package memlimit sets the agent's soft memory limit (the Go runtime's, as GOMEMLIMIT sets it)
// from the number of pods the node may run, and raises it when the live heap outgrows it.
//
// Without a limit the Go runtime lets the heap grow to twice what is live before it collects
// (GOGC=100), so an agent with 120 MB live may hold 300 MB. On the small machines the agent is
// for, the memory is worth more than the CPU a few more collections cost. A limit below the
// live heap would make the collector run back to back, so the limit is raised, never kept,
// when the live heap nears it.
package memlimit
