package e2ekubeadm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
	"github.com/vk-static/vk-static/test/support/hostpaths"
	"github.com/vk-static/vk-static/test/support/kubeadmnode"
	"github.com/vk-static/vk-static/test/support/kubeimages"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// nodeRuntime is what runs the control plane's containers under the agent: the process
// provider or a containerd through the CRI provider. The scenario (testControlPlane) is the
// same on both; what differs is here.
type nodeRuntime interface {
	// start prepares the runtime for t (stopped when t ends, after the agent) and returns the
	// agent's provider flags.
	start(t *testing.T, bins kubeadmnode.Binaries) []string
	// workload is what runs the one container of p (a mirror: its status is the static pod's).
	workload(t require.TestingT, c *cluster, p *corev1.Pod) workload
	// checkMirror checks what the runtime shows in the status of a control-plane mirror.
	checkMirror(t *testing.T, p *corev1.Pod)
	// apiPod is the pod the scheduler binds (no nodeName), and checkAPIPod what its status
	// must show once it runs.
	apiPod() *corev1.Pod
	checkAPIPod(t *testing.T, p *corev1.Pod)
	// waitStopped waits, once every manifest is gone, until nothing of the control plane runs.
	waitStopped(t *testing.T, c *cluster)
	// join reports whether the scenario ends with a second agent joining (process only: the
	// join is about the agent's credentials, not its runtime).
	join() bool
}

// workload is what runs one container, as its runtime knows it: an agent restart must keep
// it (the same pid, and on CRI the same container start time).
type workload struct {
	pid     int
	started int64 // the container's start time as CRI reports it (ns); 0 on the process provider
	running func() bool
}

func (w workload) String() string {
	if w.started != 0 {
		return fmt.Sprintf("pid %d, started %s", w.pid, time.Unix(0, w.started).UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("pid %d", w.pid)
}

// processRuntime is --provider process: the containers are host processes under the agent's
// supervisors, their commands the links kubeadmnode.LinkIntoPath makes.
type processRuntime struct{}

func (processRuntime) start(t *testing.T, bins kubeadmnode.Binaries) []string {
	require.NoError(t, kubeadmnode.LinkIntoPath(bins))
	return []string{"--provider", "process", "--process-allow-host-network", "--cgroup-root", cgrouptest.Root(t)}
}

func (processRuntime) workload(t require.TestingT, c *cluster, p *corev1.Pod) workload {
	require.Len(t, p.Status.ContainerStatuses, 1, "%s", p.Name)
	w, err := agentproc.ContainerWorkload(c.agent.Dir, p.Status.ContainerStatuses[0].ContainerID)
	require.NoError(t, err, "%s", p.Name)
	return workload{pid: w.Pid, running: w.Running}
}

// checkMirror: the process provider runs no image, and reports none.
func (processRuntime) checkMirror(*testing.T, *corev1.Pod) {}

// apiPod's image is never pulled: the process provider runs the command from the host.
func (processRuntime) apiPod() *corev1.Pod {
	return unboundPod("busybox", []string{"sleep", "3600"}, nil)
}

func (processRuntime) checkAPIPod(t *testing.T, p *corev1.Pod) {
	// With --process-allow-host-network and no CNI configuration, the node's network.
	assert.Equal(t, nodeIP.String(), p.Status.PodIP)
}

func (processRuntime) waitStopped(t *testing.T, c *cluster) {
	assert.EventuallyWithT(t, func(ct *assert.CollectT) {
		procs, err := agentproc.ContainerProcesses(c.agent.Dir)
		require.NoError(ct, err)
		assert.Empty(ct, procs, "still running")
	}, 2*time.Minute, 200*time.Millisecond, "the control plane's processes stop once its manifests are removed")
}

func (processRuntime) join() bool { return true }

// podSubnet is the CRI run's pod network (containerd's bridge CNI, in the test's network
// namespace): the scheduled API pod gets an address of it.
var podSubnet = netip.MustParsePrefix("10.244.0.0/24")

// workloadImage is the CRI run's image for the scheduled API pod: test/support/testimage's
// workload, imported, so that IfNotPresent (its tag is not latest) never pulls.
const workloadImage = "localhost/vk-static/e2ekubeadm/workload:1"

// criRuntime is --provider cri on a containerd of the test's own, started in the test's
// namespaces, with kubeadm's images built and imported (test/support/kubeimages): the
// manifests' image references resolve locally, imagePullPolicy IfNotPresent pulls nothing.
type criRuntime struct {
	cd *testcontainerd.Containerd
	rs internalapi.RuntimeService
	// digests are, by reference, the digests (config's and manifest's) of the images built
	// and imported: a container's imageID must name one of its image's.
	digests map[string][]string
}

// importTimeout bounds building and importing the images: some 430 MB of binaries, hashed
// once and copied twice (a tarball for ctr, containerd's content store).
const importTimeout = 5 * time.Minute

func (r *criRuntime) start(t *testing.T, _ kubeadmnode.Binaries) []string {
	ctx, cancel := context.WithTimeout(context.Background(), importTimeout)
	defer cancel()
	// A bridge network: the runtime reports NetworkReady (the Node's Ready follows it, as the
	// kubelet's does), and the scheduled API pod, the only one not on the host's network, gets
	// an address of its own, as it would on a cluster.
	cd, err := testcontainerd.Start(ctx, testcontainerd.Options{Bridge: &testcontainerd.Bridge{Subnet: podSubnet}})
	require.NoError(t, err)
	r.cd = cd
	t.Cleanup(func() {
		if t.Failed() {
			if data, err := os.ReadFile(cd.LogPath()); err == nil {
				lines := strings.Split(string(data), "\n")
				t.Logf("containerd's log, the last lines:\n%s", strings.Join(lines[max(0, len(lines)-100):], "\n"))
			}
		}
		if err := cd.Stop(); err != nil {
			t.Errorf("stop containerd: %v", err)
		}
	})
	r.rs, err = criclient.NewRemoteRuntimeService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.rs.Close(context.Background()) })

	start := time.Now()
	kbins, err := kubeimages.FindBinaries()
	require.NoError(t, err)
	images, err := kubeimages.Build(ctx, kbins)
	require.NoError(t, err)
	r.digests = map[string][]string{}
	for ref, img := range images {
		config, err := img.ConfigName()
		require.NoError(t, err)
		manifest, err := img.Digest()
		require.NoError(t, err)
		r.digests[ref] = []string{config.String(), manifest.String()}
	}
	require.NoError(t, kubeimages.Import(ctx, cd, images))
	img, err := testimage.Build(testimage.Options{Cmd: []string{"sleep"}})
	require.NoError(t, err)
	require.NoError(t, testimage.Import(ctx, cd, workloadImage, img))
	t.Logf("kubeadm's images built and imported into containerd (%s)", time.Since(start).Round(100*time.Millisecond))
	return []string{"--provider", "cri", "--container-runtime-endpoint", cd.Endpoint()}
}

// workload is the container's task as containerd knows it: its pid (CRI's verbose status) and
// start time.
func (r *criRuntime) workload(t require.TestingT, _ *cluster, p *corev1.Pod) workload {
	require.Len(t, p.Status.ContainerStatuses, 1, "%s", p.Name)
	cid := p.Status.ContainerStatuses[0].ContainerID
	id, ok := strings.CutPrefix(cid, "containerd://")
	require.True(t, ok, "%s: container ID %q is not containerd's", p.Name, cid)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := r.rs.ContainerStatus(ctx, id, true)
	require.NoError(t, err, "%s: container %s", p.Name, id)
	var info struct {
		Pid int `json:"pid"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp.GetInfo()["info"]), &info), "%s: containerd's verbose status", p.Name)
	require.NotZero(t, info.Pid, "%s: container %s has no task pid", p.Name, id)
	return workload{pid: info.Pid, started: resp.GetStatus().GetStartedAt(), running: func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// A list, not ContainerStatus: a container removed is no error (which the CRI client
		// would log), only absent.
		list, err := r.rs.ListContainers(ctx, &runtimeapi.ContainerFilter{Id: id,
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
		return err == nil && len(list) == 1
	}}
}

// checkMirror: the container runs the image kubeadm's manifest names, the one built and
// imported (no registry is in reach of the test's network namespace, and IfNotPresent finds it).
func (r *criRuntime) checkMirror(t *testing.T, p *corev1.Pod) {
	require.Len(t, p.Status.ContainerStatuses, 1, p.Name)
	cs, ref := p.Status.ContainerStatuses[0], p.Spec.Containers[0].Image
	assert.Equal(t, corev1.PullIfNotPresent, p.Spec.Containers[0].ImagePullPolicy, p.Name)
	assert.Equal(t, ref, cs.Image, p.Name)
	require.Contains(t, r.digests, ref, "%s: an image kubeimages builds", p.Name)
	assert.True(t, slices.ContainsFunc(r.digests[ref], func(d string) bool { return strings.Contains(cs.ImageID, d) }),
		"%s: imageID %q is none of the imported image's digests %v", p.Name, cs.ImageID, r.digests[ref])
	assert.True(t, strings.HasPrefix(cs.ContainerID, "containerd://"), "%s: container ID %s", p.Name, cs.ContainerID)
}

func (r *criRuntime) apiPod() *corev1.Pod {
	return unboundPod(workloadImage, nil, []string{"sleep"})
}

func (r *criRuntime) checkAPIPod(t *testing.T, p *corev1.Pod) {
	ip, err := netip.ParseAddr(p.Status.PodIP)
	require.NoError(t, err, "pod IP %q", p.Status.PodIP)
	assert.True(t, podSubnet.Contains(ip), "pod IP %s on the bridge network %s", ip, podSubnet)
	assert.True(t, strings.HasPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://"), p.Status.ContainerStatuses[0].ContainerID)
}

// waitStopped waits until containerd holds no sandbox and no container.
func (r *criRuntime) waitStopped(t *testing.T, _ *cluster) {
	assert.EventuallyWithT(t, func(ct *assert.CollectT) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sandboxes, err := r.rs.ListPodSandbox(ctx, nil)
		require.NoError(ct, err)
		containers, err := r.rs.ListContainers(ctx, nil)
		require.NoError(ct, err)
		var left []string
		for _, s := range sandboxes {
			left = append(left, "sandbox "+s.GetMetadata().GetNamespace()+"/"+s.GetMetadata().GetName()+" "+s.GetState().String())
		}
		for _, c := range containers {
			left = append(left, "container "+c.GetMetadata().GetName()+" "+c.GetState().String())
		}
		assert.Empty(ct, left, "still in containerd")
	}, 2*time.Minute, 200*time.Millisecond, "the control plane's sandboxes and containers removed once its manifests are removed")
}

func (r *criRuntime) join() bool { return false }

// unboundPod is the pod the scheduler binds: no nodeName.
func unboundPod(image string, command, args []string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "unbound"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: "main", Image: image, Command: command, Args: args}},
		},
	}
}

// freshKubeadmPaths mounts a new tmpfs on each of kubeadm's paths (kubeadmnode.Masks) for t, over the one
// TestMain mounted, and unmounts it when t ends: each test's kubeadm starts from empty
// /etc/kubernetes and /var/lib/etcd, and nothing of one test's control plane reaches the next.
// Registered first, the unmount runs last, once the test's agent and runtime are gone.
func freshKubeadmPaths(t *testing.T) {
	t.Helper()
	require.NoError(t, hostpaths.Mask(kubeadmnode.Masks...))
	t.Cleanup(func() {
		for i := len(kubeadmnode.Masks) - 1; i >= 0; i-- {
			if err := unix.Unmount(kubeadmnode.Masks[i].Path, 0); err != nil {
				t.Errorf("unmount the test's tmpfs on %s: %v", kubeadmnode.Masks[i].Path, err)
			}
		}
	})
}
