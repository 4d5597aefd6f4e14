// Package psi reads the kernel's pressure stall information (PSI) for the Summary API, as the
// kubelet reports it (KubeletPSI): the files /proc/pressure/{cpu,memory,io} of the whole
// machine and cpu.pressure, memory.pressure and io.pressure of a cgroup v2 directory, each
//
//	some avg10=0.12 avg60=0.05 avg300=0.01 total=123456
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// where avg* are the percentages of time over 10, 60 and 300 seconds that some (or all)
// non-idle tasks were stalled on the resource, and total is the stall time in microseconds
// since the cgroup (or the machine) began. The "full" line is missing from cpu.pressure before
// Linux 5.13, and is all zeros in /proc/pressure/cpu after it.
//
// Parse reads one file's content and says what is wrong with a malformed one; Pressure.Stats
// converts it to the Summary API's PSIStats. The Summary API documents Total in nanoseconds,
// but the kubelet reports the kernel's microseconds unchanged (cAdvisor copies the cgroup
// library's value, and its own Prometheus metrics read it as microseconds), and so does
// Stats: a client comparing vk-static's figures with a kubelet's sees the same numbers.
//
// Read and ReadAll read the files: a file that is not there (a kernel without PSI, PSI off
// for the cgroup, cgroup v1) or that the kernel refuses to read (psi=0) is no PSI — nil, not
// an error — and is left out of the Summary. (The kubelet's cAdvisor reports zeros there,
// which cannot be told from a cgroup that never stalled.)
//
//	res, err := psi.ReadAll("/sys/fs/cgroup/kubepods/pod<UID>", ".pressure")
//	cpu.PSI = res.CPU // nil where there is none
package psi
