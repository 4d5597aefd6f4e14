package process

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/lifecycle/volume"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
	"github.com/vk-static/vk-static/test/support/syncbuf"
)

// The escape suite: each test is an attack that a pod with the PodSecurity "restricted" context
// made on the runtime before it sandboxed untrusted pods, and that succeeded then. Each runs
// twice: as an API pod, and as a static pod under RestrictStaticPods, which holds static pods
// to the same rules.

// untrusted is how an attacking pod comes: from the API server, or from a manifest on a node
// that restricts static pods.
type untrusted struct {
	name string
	cfg  Config
	pod  func(name string) *corev1.Pod
}

func untrustedKinds() []untrusted {
	return []untrusted{
		{"api pod", Config{}, func(name string) *corev1.Pod { return restrictedPod(name, nil) }},
		{"restricted static pod", Config{RestrictStaticPods: true}, func(name string) *corev1.Pod {
			return restrictedPod(name, map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource})
		}},
	}
}

// restrictedPod is a pod with the PodSecurity "restricted" context, running as nobody.
func restrictedPod(name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Annotations: annotations},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](65534),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{Name: "c", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}}},
		},
	}
}

// podRun is a pod's container the test started through Admit, RunSandbox, CreateContainer and
// StartContainer, as the lifecycle does.
type podRun struct {
	sandbox, container, log string
}

// startPod admits pod and starts its first container with argv; it is stopped when the test
// ends.
func startPod(t *testing.T, r *Runtime, pod *corev1.Pod, argv []string, env []string, mounts ...lifecycle.Mount) podRun {
	t.Helper()
	return startPodWith(t, r, pod, &lifecycle.SandboxConfig{}, argv, env, mounts...)
}

// startPodWith is startPod with a sandbox config of sb's fields besides the pod's.
func startPodWith(t *testing.T, r *Runtime, pod *corev1.Pod, sb *lifecycle.SandboxConfig, argv []string, env []string, mounts ...lifecycle.Mount) podRun {
	t.Helper()
	require.NoError(t, r.Admit(pod), "a pod with the restricted context is admitted")
	ctx := context.Background()
	sbc := *sb
	sbc.PodUID, sbc.Namespace, sbc.Name, sbc.Hostname, sbc.Pod = pod.UID, pod.Namespace, pod.Name, pod.Name, pod
	sandboxID, err := r.RunSandbox(ctx, &sbc)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := r.StopSandbox(context.Background(), sandboxID); err != nil {
			t.Errorf("stop sandbox: %v", err)
		}
	})
	c := &pod.Spec.Containers[0]
	log := filepath.Join(t.TempDir(), "c.log")
	id, err := r.CreateContainer(ctx, sandboxID, &lifecycle.ContainerConfig{
		Name: c.Name, Command: argv, Env: append([]string{testPath}, env...), LogPath: log, Mounts: mounts,
		User: &lifecycle.User{UID: 65534, GID: -1}, Pod: pod, Container: c,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := r.StopContainer(ctx, id, 0); err != nil && !provider.IsNotFound(err) {
			t.Errorf("stop container %s: %v", id, err)
		}
	})
	require.NoError(t, r.StartContainer(ctx, id))
	return podRun{sandbox: sandboxID, container: id, log: log}
}

// output waits for the container to end and returns its log, one string.
func (p podRun) output(t *testing.T, r *Runtime) string {
	t.Helper()
	st := waitExited(t, r, p.container)
	out := strings.Join(logContents(t, p.log, "stdout"), "\n") + "\n" + strings.Join(logContents(t, p.log, "stderr"), "\n")
	t.Logf("exit code %d, output:\n%s", st.ExitCode, out)
	return out
}

// TestEscapeSetuidThroughVolume: a volume mounted over /etc/pam.d lets the pod write the PAM
// configuration of the host's setuid su, which then made it root.
func TestEscapeSetuidThroughVolume(t *testing.T) {
	requireRoot(t)
	su, err := os.Stat("/bin/su")
	if err != nil || su.Mode()&os.ModeSetuid == 0 {
		t.Skip("no setuid /bin/su on this host")
	}
	if _, err := os.Stat("/etc/pam.d"); err != nil {
		t.Skip("no /etc/pam.d on this host")
	}
	for _, kind := range untrustedKinds() {
		t.Run(kind.name, func(t *testing.T) {
			r := newTestRuntime(t, kind.cfg)
			vol := t.TempDir()
			require.NoError(t, os.Chmod(vol, 0o777))
			p := startPod(t, r, kind.pod("pam"), []string{"sh", "-c",
				`printf 'auth sufficient pam_permit.so\naccount sufficient pam_permit.so\nsession sufficient pam_permit.so\n' > /etc/pam.d/su; su -c id root; echo end`},
				nil, lifecycle.Mount{HostPath: vol, ContainerPath: "/etc/pam.d"})
			out := p.output(t, r)
			require.Contains(t, out, "end")
			assert.NotContains(t, out, "uid=0", "su became root through the pod's PAM configuration")
		})
	}
}

// TestEscapeSubPathSwap: a container that shares a volume with another swapped the directory
// the other mounts with subPath for a symlink to / after the agent checked it and before the
// runtime mounted it (CVE-2017-1002101), and the other container got the host's root.
func TestEscapeSubPathSwap(t *testing.T) {
	requireRoot(t)
	for _, kind := range untrustedKinds() {
		t.Run(kind.name, func(t *testing.T) {
			r := newTestRuntime(t, kind.cfg)
			vm, err := volume.New(volume.Config{PodsDir: filepath.Join(t.TempDir(), "pods"), CanMount: true})
			require.NoError(t, err)
			pod := kind.pod("subpath")
			pod.Spec.Volumes = []corev1.Volume{{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "shared", MountPath: "/tmp/victim", SubPath: "sub"}}
			ctx := context.Background()
			vols, _, err := vm.Setup(ctx, pod, env.PodFacts{}, nil)
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, vm.Teardown(context.Background(), pod.UID)) })
			sub := filepath.Join(vols["shared"], "sub")
			require.NoError(t, os.Mkdir(sub, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(sub, "inside"), nil, 0o644))

			ms, err := vm.Mounts(pod, &pod.Spec.Containers[0], vols, nil)
			require.NoError(t, err)
			// The sibling container's move, between the agent's check and the runtime's mount.
			require.NoError(t, os.Rename(sub, sub+".old"))
			require.NoError(t, os.Symlink("/", sub))

			p := startPod(t, r, pod, []string{"sh", "-c", "ls /tmp/victim; echo end"}, nil,
				lifecycle.Mount{HostPath: ms[0].HostPath, ContainerPath: ms[0].ContainerPath, ReadOnly: ms[0].ReadOnly})
			out := p.output(t, r)
			require.Contains(t, out, "end")
			assert.Contains(t, out, "inside", "the directory that was checked")
			assert.NotContains(t, out, "proc", "the host's root")
		})
	}
}

// TestEscapeSiblingPod: a pod read the files and environment of another pod running as the
// same user, through /proc/<pid>/root and /proc/<pid>/environ, and could kill its processes.
func TestEscapeSiblingPod(t *testing.T) {
	requireRoot(t)
	const mnt = "/srv" // an empty directory every Debian host has, for the victim's volume
	if fi, err := os.Stat(mnt); err != nil || !fi.IsDir() {
		t.Skip("no " + mnt + " on this host")
	}
	for _, kind := range untrustedKinds() {
		t.Run(kind.name, func(t *testing.T) {
			r := newTestRuntime(t, kind.cfg)
			vol := t.TempDir()
			require.NoError(t, os.Chown(vol, 65534, 65534))
			victim := startPod(t, r, kind.pod("victim"), []string{"sh", "-c", "echo file-secret > " + mnt + "/secret; exec sleep 1000"},
				[]string{"TOKEN=env-secret"}, lifecycle.Mount{HostPath: vol, ContainerPath: mnt})
			var pid int
			require.Eventually(t, func() bool {
				st, err := records.ReadState(r.containerDir(victim.container))
				if err != nil || st == nil {
					return false
				}
				pid = st.Pid
				data, _ := os.ReadFile(filepath.Join(vol, "secret"))
				return len(data) > 0
			}, waitFor, tick)
			attacker := startPod(t, r, kind.pod("attacker"), []string{"sh", "-c", fmt.Sprintf(
				`for p in /proc/[0-9]*; do cat $p/root%s/secret; tr '\0' '\n' < $p/environ; done 2>/dev/null | grep secret; kill -9 %d; echo end`, mnt, pid)}, nil)
			out := attacker.output(t, r)
			require.Contains(t, out, "end")
			assert.NotContains(t, out, "file-secret", "read a file in another pod's volume")
			assert.NotContains(t, out, "env-secret", "read another pod's environment")
			assert.Equal(t, lifecycle.ContainerRunning, status(t, r, victim.container).State, "killed another pod's process")
		})
	}
}

// TestEscapeAgentCommandLine: a pod read the agent's command line (a manifest URL's bearer
// token, once) in /proc. The test binary is the agent here: its arguments start -test.
func TestEscapeAgentCommandLine(t *testing.T) {
	requireRoot(t)
	for _, kind := range untrustedKinds() {
		t.Run(kind.name, func(t *testing.T) {
			r := newTestRuntime(t, kind.cfg)
			p := startPod(t, r, kind.pod("cmdline"), []string{"sh", "-c", `cat /proc/[0-9]*/cmdline | tr '\0' '\n' | grep -c '^[-]test[.]'; echo end`}, nil)
			out := p.output(t, r)
			require.Contains(t, out, "end")
			assert.True(t, strings.HasPrefix(out, "0\n"), "read the agent's command line: %q", out)
		})
	}
}

// TestEscapeAgentState: a pod read the agent's state — other pods' records and volumes, its
// credentials — and the host's /tmp, where other pods and host users leave files.
func TestEscapeAgentState(t *testing.T) {
	requireRoot(t)
	for _, kind := range untrustedKinds() {
		t.Run(kind.name, func(t *testing.T) {
			// Outside /tmp, which the pod does not share with the host any more.
			credentials := outsideTmp(t)
			require.NoError(t, os.WriteFile(filepath.Join(credentials, "kubelet.conf"), []byte("client-key-data: secret\n"), 0o644))
			kind.cfg.MaskedPaths = []string{credentials}
			kind.cfg.StateDir = outsideTmp(t) // world-readable, as a careless operator might leave it
			r := newTestRuntime(t, kind.cfg)
			hostTmp := t.TempDir()
			require.NoError(t, os.Chmod(hostTmp, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(hostTmp, "left-by-another"), nil, 0o644))
			p := startPod(t, r, kind.pod("state"), []string{"sh", "-c",
				fmt.Sprintf(`ls %s %s %s; cat %s/*; echo end`, r.cfg.StateDir, credentials, hostTmp, credentials)}, nil)
			out := p.output(t, r)
			require.Contains(t, out, "end")
			assert.NotContains(t, out, "sandboxes", "listed the runtime's records")
			assert.NotContains(t, out, "client-key-data", "read the agent's credentials")
			assert.NotContains(t, out, "kubelet.conf", "listed the agent's credentials")
			assert.NotContains(t, out, "left-by-another", "saw the host's /tmp")
		})
	}
}

// outsideTmp is a world-readable directory, removed at the end of the test, that is not under
// /tmp (a restricted pod has its own): under /run, as test/support/agentproc's
// PodVisibleTempDirs.
func outsideTmp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/run", "vk-static-escape-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

// TestEscapeDevices: the host's /dev, with its raw disks, was the pod's, and nodev held nowhere.
func TestEscapeDevices(t *testing.T) {
	requireRoot(t)
	for _, kind := range untrustedKinds() {
		t.Run(kind.name, func(t *testing.T) {
			r := newTestRuntime(t, kind.cfg)
			p := startPod(t, r, kind.pod("devices"), []string{"sh", "-c", `ls /dev | tr '\n' ' '; echo; grep -v -c nodev /proc/mounts; grep -v -c nosuid /proc/mounts; echo end`}, nil)
			out := p.output(t, r)
			lines := strings.Split(out, "\n")
			require.GreaterOrEqual(t, len(lines), 3)
			assert.ElementsMatch(t, []string{"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}, strings.Fields(lines[0]))
			// Only /dev, a tmpfs of the container's own, and /dev/pts keep their devices.
			assert.Equal(t, "2", lines[1], "mounts without nodev")
			assert.Equal(t, "0", lines[2], "mounts without nosuid")
		})
	}
}

// TestSandboxNamespaces: a restricted pod's containers have the pod's hostname and IPC
// namespace, a PID namespace of their own (the pod's with shareProcessNamespace), and execs
// join them; hostPID keeps the host's; a trusted static pod sees the host as before.
func TestSandboxNamespaces(t *testing.T) {
	requireRoot(t)
	hostIPC, err := os.Readlink("/proc/self/ns/ipc")
	require.NoError(t, err)
	script := `hostname; echo $$; readlink /proc/self/ns/ipc; ls /proc | grep -c '^[0-9]'; exec sleep 1000`
	for _, tc := range []struct {
		name  string
		cfg   Config
		setup func(*corev1.Pod)
		// the workload's pid in its namespace is 1; sees few processes; the pod's hostname and
		// IPC namespace
		pid1, own, podUTS bool
	}{
		{"own PID namespace", Config{}, func(*corev1.Pod) {}, true, true, true},
		{"shareProcessNamespace", Config{}, func(p *corev1.Pod) { p.Spec.ShareProcessNamespace = ptr.To(true) }, false, true, true},
		{"hostPID", Config{AllowHostNamespaces: true}, func(p *corev1.Pod) { p.Spec.HostPID = true }, false, false, true},
		{"hostNetwork keeps the node's hostname", Config{}, func(p *corev1.Pod) { p.Spec.HostNetwork = true }, true, true, false},
		{"trusted static pod", Config{}, func(p *corev1.Pod) {
			p.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource}
		}, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRuntime(t, tc.cfg)
			pod := restrictedPod("ns-pod", nil)
			tc.setup(pod)
			p := startPod(t, r, pod, []string{"sh", "-c", script}, nil)
			var lines []string
			require.Eventually(t, func() bool {
				lines = logContents(t, p.log, "stdout")
				return len(lines) == 4
			}, waitFor, tick)
			host, _ := os.Hostname()
			if tc.podUTS {
				assert.Equal(t, "ns-pod", lines[0], "hostname")
				assert.NotEqual(t, hostIPC, lines[2], "IPC namespace")
			} else {
				assert.Equal(t, host, lines[0], "hostname")
			}
			assert.Equal(t, tc.pid1, lines[1] == "1", "pid %s", lines[1])
			n, err := strconv.Atoi(lines[3])
			require.NoError(t, err)
			assert.Equal(t, tc.own, n < 5, "%d processes in /proc", n)

			// An exec joins the same namespaces, and sees the workload.
			stdout := &syncbuf.Buffer{}
			require.NoError(t, r.Exec(context.Background(), p.container, []string{"sh", "-c", "hostname; pgrep -x sleep | head -1"}, &testAttachIO{stdout: stdout, stderr: &syncbuf.Buffer{}}))
			got := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			require.Len(t, got, 2, "exec output %q", stdout.String())
			assert.Equal(t, lines[0], got[0], "exec's hostname")
			if tc.pid1 {
				assert.Equal(t, "1", got[1], "the workload seen from an exec")
			}
		})
	}
}

// TestSandboxHolderGone: a restricted pod whose namespace holder is gone (killed, or the node
// rebooted) has a sandbox that is not ready, so that the lifecycle makes the pod a new one.
func TestSandboxHolderGone(t *testing.T) {
	requireRoot(t)
	r := newTestRuntime(t, Config{})
	p := startPod(t, r, restrictedPod("holder", nil), []string{"sleep", "1000"}, nil)
	rec, err := r.loadSandbox(p.sandbox)
	require.NoError(t, err)
	require.NotNil(t, rec.Holder)
	require.NoError(t, procfs.SameProcess(rec.Holder.Pid, rec.Holder.StartTime))
	require.NoError(t, killHolder(rec.Holder))
	require.Eventually(t, func() bool {
		sbs, err := r.ListSandboxes(context.Background())
		require.NoError(t, err)
		return len(sbs) == 1 && sbs[0].State == lifecycle.SandboxNotReady
	}, waitFor, tick)
}

// TestSandboxTTY: a restricted container's terminal is a pty of the host's devpts, which its
// own /dev has: the supervisor opens it through the container's /dev/ptmx, and ttyname finds it.
func TestSandboxTTY(t *testing.T) {
	requireRoot(t)
	r := newTestRuntime(t, Config{})
	pod := restrictedPod("tty", nil)
	pod.Spec.Containers[0].TTY = true
	require.NoError(t, r.Admit(pod))
	ctx := context.Background()
	sb, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Pod: pod})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.StopSandbox(context.Background(), sb) })
	log := filepath.Join(t.TempDir(), "c.log")
	id, err := r.CreateContainer(ctx, sb, &lifecycle.ContainerConfig{Name: "c", TTY: true, LogPath: log, Env: []string{testPath},
		Command: []string{"sh", "-c", "tty; test -t 0 && echo terminal"}, Pod: pod, Container: &pod.Spec.Containers[0]})
	require.NoError(t, err)
	require.NoError(t, r.StartContainer(ctx, id))
	st := waitExited(t, r, id)
	out := logContents(t, log, "stdout")
	require.Equal(t, int32(0), st.ExitCode, "%q", out)
	require.Len(t, out, 2, "%q", out)
	assert.Regexp(t, `^/dev/pts/[0-9]+\r?$`, out[0])
	assert.Equal(t, "terminal", strings.TrimSpace(out[1]))
}

// TestSandboxAfterAgentRestart: a restricted pod outlives the agent as every pod does — its
// holder and supervisors are nobody's children — and the next agent takes it up: its sandbox
// is ready, and an exec joins its namespaces.
func TestSandboxAfterAgentRestart(t *testing.T) {
	requireRoot(t)
	r := newTestRuntime(t, Config{})
	p := startPod(t, r, restrictedPod("restarted", nil), []string{"sleep", "1000"}, nil)
	require.NoError(t, r.Close())

	r2 := newTestRuntime(t, Config{StateDir: r.cfg.StateDir})
	sbs, err := r2.ListSandboxes(context.Background())
	require.NoError(t, err)
	require.Len(t, sbs, 1)
	assert.Equal(t, lifecycle.SandboxReady, sbs[0].State)
	stdout := &syncbuf.Buffer{}
	require.NoError(t, r2.Exec(context.Background(), p.container, []string{"sh", "-c", "hostname; echo $$"}, &testAttachIO{stdout: stdout, stderr: &syncbuf.Buffer{}}))
	lines := strings.Fields(stdout.String())
	require.Len(t, lines, 2, "%q", stdout.String())
	assert.Equal(t, "restarted", lines[0])
	n, err := strconv.Atoi(lines[1])
	require.NoError(t, err)
	assert.Less(t, n, 100, "the exec's pid is of the container's PID namespace")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, r2.StopContainer(ctx, p.container, 0))
	require.NoError(t, r2.StopSandbox(ctx, p.sandbox))
}
