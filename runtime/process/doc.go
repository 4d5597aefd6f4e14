// Package process is the host-process backend of lifecycle.Runtime: every container is a
// process on the host, started and watched by a supervisor process of its own that outlives
// the agent, as conmon is for CRI-O: the small vk-static-supervisor binary
// (Config.SupervisorPath), else the agent binary re-executed.
//
//	func main() {
//		process.RunSupervisorIfRequested() // first: a supervisor never returns from it
//		rt, err := process.New(process.Config{
//			StateDir:       "/var/lib/vk-static/process",
//			SupervisorPath: "/usr/local/bin/vk-static-supervisor", // or "": re-execute this binary
//		})
//		...
//		defer rt.Close() // stops watching; containers keep running
//	}
//
// Test packages that start containers without a SupervisorPath call RunSupervisorIfRequested
// first thing in TestMain.
//
// # State
//
// Everything is a file under Config.StateDir, so that a restarted agent finds it all again:
//
//	sandboxes/<id>/sandbox.json           the pod (RunSandbox records it; nothing else exists)
//	containers/<id>/config.json           what to run, decided at CreateContainer
//	containers/<id>/state.json            pids, start time, end (the supervisor writes it)
//	containers/<id>/sock                  the supervisor's socket (watch, exec, attach)
//	runtime.lock                          flocked by the one Runtime using the directory
//
// One Runtime uses a state directory at a time: New fails (ErrStateDirInUse) while another,
// in any process, holds it, until that one's Close or end.
// Ids are 16 random hex digits. Records are written atomically (temp file and rename).
// A container without state.json is Created; the log (ContainerConfig.LogPath) is never
// removed by the runtime.
//
// # The supervisor
//
// The supervisor is package supervisor, which links only the standard library and
// golang.org/x/sys (records and protocol, shared with this package, are internal packages of
// the same kind). cmd/vk-static-supervisor is it alone: about 1 MB of private memory and 10 ms
// of CPU per container, where the agent binary re-executed pays its whole package
// initialisation — client-go's schemes, protobuf, metrics — in every container (~7 MB, ~90 ms;
// docs/performance.md, process-100). The records and the socket protocol do not depend on which
// binary supervises: an agent takes up containers started by either, or by an older build.
//
// StartContainer starts the supervisor binary (Config.SupervisorPath, else /proc/self/exe)
// with VK_STATIC_SUPERVISOR=<container dir> in a session of its own (stdin and stdout on
// /dev/null, stderr on supervisor.log in its directory, where a crash would leave its reason),
// in a new mount namespace, with a socketpair on fd 3. When the
// agent is not root, and only when there are mounts, the namespace is a user and mount
// namespace mapping only the agent's ids; the supervisor gets CAP_SYS_ADMIN in it as an
// ambient capability to mount, and starts commands from a thread that has cleared it, so the
// workload holds no capability. The supervisor:
//
//   - opens its container directory and the log's directory first, and reaches them through
//     those descriptors (/proc/self/fd/N) from then on: a volume mounted over a parent of
//     --root-dir (an emptyDir at /tmp or /var) hides their paths in the container's mount
//     namespace, and its records, socket and log rotation must not depend on what a pod mounts;
//   - opens the log (package containerlog) and copies the workload's stdout and stderr (or its
//     terminal, for TTY) to it and to attached clients;
//   - makes every mount private and bind-mounts each volume over its container path (read-only
//     by a remount). A container path that does not exist on the host is a start error: the
//     runtime does not create paths on the host for a pod, except directories under
//     /run/secrets (the service account token's mount point);
//   - marks every descriptor it inherited close-on-exec: the workload gets its stdio only;
//   - starts the workload: its command's first word looked up in the container's PATH (else a default), its Env
//     only (plus PATH and HOME when it sets neither, as CRI runtimes add them: the default PATH,
//     the user's home directory or "/"), WorkingDir (default "/"), its user (uid, gid and groups; DefaultUser, "nobody",
//     when the config names none; the pod's fsGroup is one of its groups, as the kubelet's), as
//     the leader of a new session and process group; with a cgroup, forked inside it: on v1 by
//     a thread of the supervisor that joined it alone and ends after the fork (the start
//     returns once it has exited, so the supervisor's pid is never among the cgroup's when
//     the runtime sees the start), on v2 (and every exec on v2) cloned straight into it
//     (CLONE_INTO_CGROUP), else (every exec on v1, a kernel without CLONE_INTO_CGROUP) through
//     the init helper (the supervisor binary re-executed as vk-static-init), which joins the
//     container's cgroup, then drops to the user and executes the command in its own place —
//     nothing the workload does runs outside the cgroup, and the supervisor itself stays out of
//     it;
//   - writes state.json (pid and its start time from /proc/<pid>/stat, which tells the
//     workload from a later process with the same pid) and reports on fd 3, which stays open as
//     the runtime's watch connection;
//   - when the workload ends, kills what is left of its process group (a container's processes
//     end with it), waits briefly for the rest of its output, records the end (exit code, or
//     128+signal), closes every watch connection — EOF means "read state.json" — and exits.
//
// A command that cannot be started leaves the container Exited with exit code 128, Reason
// "StartError" and the reason as Message (exec: "nope": executable file not found in $PATH).
//
// The supervisor ignores SIGHUP, SIGINT and SIGTERM: the runtime stops a container by signalling
// the workload's process group (its stop signal, then SIGKILL after the grace period), after
// checking that the recorded pid still is the workload. Killing the agent (even with SIGKILL)
// leaves supervisors and workloads running; New takes them up again by connecting to each
// running container's socket, so that their exits are still reported (NotifyContainers).
//
// # Cgroups
//
// With Config.Cgroups, pods and containers are in the kubelet's cgroup hierarchy with its
// cgroupfs driver (package internal/cgroup, through the cgroup library the kubelet uses; v1 and
// v2): RunSandbox makes the pod's cgroup (<root>/kubepods[/burstable|/besteffort]/pod<UID>,
// the pod's limits and --pod-pids-limit), CreateContainer the container's inside it (its memory
// limit, CPU quota and shares; on v2 memory.oom.group=1, as the kubelet sets it, unless
// Cgroups.SingleProcessOOMKill), and both paths are recorded (sandbox.json, config.json) so that
// a restarted agent finds them again. The kernel enforces the limits; ContainerStats reads the
// cgroup (every process in it, a setsid child and an exec'd command included); StopContainer's
// SIGKILL also kills everything in the cgroup (freezer on v1, cgroup.kill on v2), and so does
// the container's end; a container that the OOM killer ended (its workload killed, exit code
// 137, and an OOM kill counted in its cgroup: not a shell that outlived its killed child) gets
// Reason "OOMKilled", and its cgroup is removed; RemoveSandbox removes the pod's, and Close
// removes the cgroup of every pod nothing runs in (CreateContainer makes it again, with the
// pod's limits). Where cgroups cannot be used (not root, none mounted), CgroupsUnavailable says why,
// and the lifecycle warns each pod with limits (LimitsNotEnforced).
//
// A supervisor that died without recording the workload's end (killed) is noticed by its watch
// connection ending, or by New failing to connect: the workload's process group, if its pid
// still is the workload, is killed, and the container is recorded Exited with exit code 255
// and Reason "SupervisorLost".
//
// A record's file is synced before it is renamed into place, so a record on disk is whole, and
// its directory is synced after — except after a new sandbox's or container's first record
// (sandbox.json, config.json), to keep a directory sync per record off every container's start:
// config.json becomes durable with the supervisor's first state.json, which syncs the same
// directory; a power cut before that, or before anything syncs a new sandbox's directory, loses
// the record whole, and New removes a sandbox or container directory without its record (none
// of it ran; the lifecycle makes what it still needs again). state.json's writes are tried again
// for a while when they fail. A supervisor that still cannot record the workload's end writes
// it to its own log (supervisor.log) instead; the runtime records that end — the workload's own
// exit code, Reason "EndNotRecorded" — rather than inventing "SupervisorLost". An end the runtime
// cannot write either (a start error, a lost supervisor) is reported from memory until the
// container is removed, and logged.
//
// # Pods and security
//
// A trusted pod's processes share the host's network (SandboxStatus.IPs is empty: the pod has
// the node's addresses). Trust follows the source:
// a static pod (file or HTTP source) is the node administrator's and runs as its manifest says,
// root when it names no user, as the kubelet runs it with an image's default user; an API pod
// runs as Config.DefaultUser when it names none. Admit refuses, naming the field and the rules
// the pod was held to: for API pods (and static pods under Config.RestrictStaticPods) a
// container that would run as root or with group 0 unless Config.AllowRoot, privileged
// containers and capabilities.add (a static pod that runs as root holds every capability
// already), and a uid or gid of the host's — below 1000, or named in /etc/passwd or
// /etc/group — in runAsUser, runAsGroup, supplementalGroups or fsGroup, unless
// Config.AllowedUIDs or AllowedGIDs holds it or it is the default user's: such an id owns the
// host's files and devices (group disk writes its block devices); for every pod runAsNonRoot
// with root; and for untrusted pods hostPID and hostIPC unless Config.AllowHostNamespaces.
// Seccomp, AppArmor, SELinux and readOnlyRootFilesystem are not enforced; resource limits are,
// with cgroups. Without root, the agent runs every container as itself, with its groups, and
// refuses any other runAsUser.
//
// An untrusted pod (restricted) runs in a sandbox built around a view of the host
// ([records.Sandbox], which the [supervisor] enters): RunSandbox starts the pod's namespace
// holder — the supervisor binary as vk-static-pod, PID 1 of a new PID namespace, in new IPC and
// UTS namespaces with the pod's hostname, reparented to the host's init — and records its pid
// and start time (sandbox.json); a sandbox whose holder is gone is NotReady, and StopSandbox
// kills it. The supervisor of each of the pod's containers, in its own mount namespace, makes
// /tmp and /var/tmp empty tmpfs of the container's, masks Config.MaskedPaths (and StateDir)
// with empty read-only mounts, mounts the volumes, mounts a /dev of the standard devices, and
// makes every mount nosuid and nodev but /dev's (mount_setattr; a remount of each before Linux
// 5.12). Its launcher thread sets no_new_privs and joins the holder's IPC and UTS namespaces,
// and its PID namespace with shareProcessNamespace; the workload starts through the init
// helper, cloned into a mount namespace where it mounts a /proc for its PID namespace — a new
// one, of which the workload is PID 1, without shareProcessNamespace — and execs join the same.
// hostPID, hostIPC and hostNetwork (the node's hostname) keep the host's. Any container with
// allowPrivilegeEscalation: false gets no_new_privs.
//
// A restricted pod that does not ask for hostNetwork is on the node's pod network (Config.CNI,
// package internal/podnet): its holder is in a new network namespace with lo up, which
// RunSandbox attaches with the CNI plugins (ADD: the pod's addresses, recorded and reported by
// SandboxIPs; its host ports) and StopSandbox detaches (DEL) before the holder goes; its
// containers join it, and see the sandbox's resolv.conf (the host's, or systemd-resolved's
// upstream list when the host's names a loopback server) as /etc/resolv.conf. Without a pod network RunSandbox fails with ErrNetworkNotReady — the pod
// waits, as a kubelet's on a node whose network plugin is not ready — unless
// Config.AllowHostNetwork puts it on the host's.
//
// A container's terminationMessagePath gets no file: the container's filesystem is the host's,
// where the default /dev/termination-log does not exist, and the runtime creates no path on
// the host for a pod. Its termination message comes from its log only
// (terminationMessagePolicy FallbackToLogsOnError), as the lifecycle reads it.
//
// Ephemeral containers are not run: the Runtime does not implement lifecycle.EphemeralRuntime,
// so each waits for good, its message naming spec.ephemeralContainers[i] and this provider,
// while the rest of the pod runs on. A host process has no image to debug with and no process
// namespace of its own for targetContainerName to join, and one added to a running pod would
// bypass Admit, which saw the pod only when it was created.
//
// # Streams
//
// Exec and Attach hand pipes (or, for Exec with a TTY, a pty slave) to the supervisor over its
// socket (SCM_RIGHTS); Exec runs the command as the workload is run (in its cgroup), in a session
// of its own, and kills it when its context ends. PortForward reaches only a socket that one of
// the pod's own processes listens on (those in its containers' cgroups; without cgroups, each
// workload's session, which an exec'd command or a setsid child is not in), dialed at the
// address it listens on, never another host service on the port: the agent's healthz and
// metrics, a local etcd.
// ContainerStats reads the container's cgroup; without one it sums CPU time and resident memory
// over the workload's session (which an exec'd command or a setsid child is not in). On cgroup
// v2 it also reads the cgroup's pressure stall information (cpu.pressure, memory.pressure,
// io.pressure), and SandboxStats the pod cgroup's, for the Summary API, as the kubelet
// reports them; v1 has none, and the fields are left out.
package process
