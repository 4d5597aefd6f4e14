package cri

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/lifecycle/dns"
)

func TestPodSandboxConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pod   corev1.PodSpec
		dns   *dns.Config
		check func(t *testing.T, sc *runtimeapi.PodSandboxConfig)
	}{{
		name: "the lifecycle's DNS, on the host's network too",
		pod:  corev1.PodSpec{HostNetwork: true, DNSPolicy: corev1.DNSClusterFirstWithHostNet},
		dns:  &dns.Config{Servers: []string{"10.96.0.10"}, Searches: []string{"ns.svc.cluster.local"}, Options: []string{"ndots:5"}},
		check: func(t *testing.T, sc *runtimeapi.PodSandboxConfig) {
			assert.Equal(t, &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: []string{"ns.svc.cluster.local"}, Options: []string{"ndots:5"}}, sc.DnsConfig)
		},
	}, {
		name: "host network: no hostname, no DNS, node namespace, every port",
		pod:  corev1.PodSpec{HostNetwork: true, DNSConfig: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}}},
		check: func(t *testing.T, sc *runtimeapi.PodSandboxConfig) {
			assert.Empty(t, sc.Hostname)
			assert.Nil(t, sc.DnsConfig)
			assert.Equal(t, runtimeapi.NamespaceMode_NODE, sc.Linux.SecurityContext.NamespaceOptions.Network)
			require.Len(t, sc.PortMappings, 2)
		},
	}, {
		name: "pod network: hostname, DNS, host ports only",
		pod: corev1.PodSpec{DNSConfig: &corev1.PodDNSConfig{
			Nameservers: []string{"1.1.1.1"}, Searches: []string{"s"},
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}},
		}},
		check: func(t *testing.T, sc *runtimeapi.PodSandboxConfig) {
			assert.Equal(t, "h", sc.Hostname)
			assert.Equal(t, &runtimeapi.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"s"}, Options: []string{"ndots:2", "edns0"}}, sc.DnsConfig)
			assert.Equal(t, runtimeapi.NamespaceMode_POD, sc.Linux.SecurityContext.NamespaceOptions.Network)
			require.Len(t, sc.PortMappings, 1)
			assert.Equal(t, &runtimeapi.PortMapping{Protocol: runtimeapi.Protocol_UDP, ContainerPort: 53, HostPort: 5353}, sc.PortMappings[0])
		},
	}, {
		name: "host PID and IPC, sysctls, user, groups with fsGroup, seccomp",
		pod: corev1.PodSpec{HostPID: true, HostIPC: true, SecurityContext: &corev1.PodSecurityContext{
			RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](2000), SupplementalGroups: []int64{3}, FSGroup: ptr.To[int64](4),
			Sysctls:        []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}},
		check: func(t *testing.T, sc *runtimeapi.PodSandboxConfig) {
			lsc := sc.Linux.SecurityContext
			assert.Equal(t, runtimeapi.NamespaceMode_NODE, lsc.NamespaceOptions.Pid)
			assert.Equal(t, runtimeapi.NamespaceMode_NODE, lsc.NamespaceOptions.Ipc)
			assert.Equal(t, int64(1000), lsc.RunAsUser.Value)
			assert.Equal(t, int64(2000), lsc.RunAsGroup.Value)
			assert.Equal(t, []int64{3, 4}, lsc.SupplementalGroups)
			assert.Equal(t, map[string]string{"net.core.somaxconn": "1024"}, sc.Linux.Sysctls)
			assert.Equal(t, runtimeapi.SecurityProfile_RuntimeDefault, lsc.Seccomp.ProfileType)
		},
	}, {
		name: "shareProcessNamespace: one PID namespace for the pod",
		pod:  corev1.PodSpec{ShareProcessNamespace: ptr.To(true)},
		check: func(t *testing.T, sc *runtimeapi.PodSandboxConfig) {
			assert.Equal(t, runtimeapi.NamespaceMode_POD, sc.Linux.SecurityContext.NamespaceOptions.Pid)
			assert.Equal(t, runtimeapi.SecurityProfile_Unconfined, sc.Linux.SecurityContext.Seccomp.ProfileType, "unset is Unconfined")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u", Annotations: map[string]string{"a": "b"}}, Spec: tc.pod}
			cfg := &lifecycle.SandboxConfig{
				PodUID: "u", Namespace: "ns", Name: "p", Attempt: 2, Hostname: "h", HostNetwork: tc.pod.HostNetwork, DNS: tc.dns,
				LogDirectory: "/logs", Labels: map[string]string{lifecycle.LabelPodUID: "u"}, Pod: pod,
				Ports: []lifecycle.PortMapping{{Protocol: "TCP", ContainerPort: 80}, {Protocol: "UDP", ContainerPort: 53, HostPort: 5353}},
			}
			sc := podSandboxConfig(cfg, "/seccomp")
			assert.Equal(t, &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u", Attempt: 2}, sc.Metadata)
			assert.Equal(t, "/logs", sc.LogDirectory)
			assert.Equal(t, map[string]string{lifecycle.LabelPodUID: "u", LabelManaged: "true"}, sc.Labels)
			assert.Equal(t, map[string]string{"a": "b"}, sc.Annotations)
			tc.check(t, sc)
		})
	}
}

func TestContainerConfig(t *testing.T) {
	sandbox := &runtimeapi.PodSandboxConfig{LogDirectory: "/logs", Linux: &runtimeapi.LinuxPodSandboxConfig{
		SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}},
	}}
	bidirectional := corev1.MountPropagationBidirectional
	c := &corev1.Container{
		Name: "c",
		VolumeMounts: []corev1.VolumeMount{
			{Name: "v", MountPath: "/data", MountPropagation: &bidirectional}, {Name: "w", MountPath: "/other"},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
	}
	cfg := &lifecycle.ContainerConfig{
		Name: "c", Attempt: 3, Image: "img:1", ImageRef: "sha256:abc", Args: []string{"a"},
		Env: []string{"A=1", "B=x=y"}, WorkingDir: "/w", LogPath: "/logs/c/3.log", Stdin: true, TTY: true, StopSignal: 2,
		Mounts: []lifecycle.Mount{{HostPath: "/h", ContainerPath: "/data"}, {HostPath: "/o", ContainerPath: "/other", ReadOnly: true}},
		Labels: map[string]string{lifecycle.LabelContainerName: "c"}, Pod: &corev1.Pod{}, Container: c,
	}
	cc, err := containerConfig(cfg, sandbox, "")
	require.NoError(t, err)
	assert.Equal(t, &runtimeapi.ContainerMetadata{Name: "c", Attempt: 3}, cc.Metadata)
	assert.Equal(t, "sha256:abc", cc.Image.Image)
	assert.Equal(t, "img:1", cc.Image.UserSpecifiedImage)
	assert.Empty(t, cc.Command, "empty command: the image's entrypoint")
	assert.Equal(t, []string{"a"}, cc.Args)
	assert.Equal(t, []*runtimeapi.KeyValue{{Key: "A", Value: []byte("1")}, {Key: "B", Value: []byte("x=y")}}, cc.Envs)
	assert.Equal(t, "c/3.log", cc.LogPath, "relative to the sandbox's log directory")
	assert.True(t, cc.Stdin)
	assert.True(t, cc.Tty)
	assert.Equal(t, runtimeapi.Signal_SIGINT, cc.StopSignal)
	assert.Equal(t, map[string]string{lifecycle.LabelContainerName: "c", LabelManaged: "true"}, cc.Labels)
	assert.Equal(t, []*runtimeapi.Mount{
		{HostPath: "/h", ContainerPath: "/data", Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL},
		{HostPath: "/o", ContainerPath: "/other", Readonly: true},
	}, cc.Mounts)
	assert.Equal(t, &runtimeapi.LinuxContainerResources{CpuShares: 256, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 64 << 20}, cc.Linux.Resources)
	assert.Equal(t, runtimeapi.NamespaceMode_NODE, cc.Linux.SecurityContext.NamespaceOptions.Network)

	cfg.LogPath = "/elsewhere/c/3.log"
	_, err = containerConfig(cfg, sandbox, "")
	assert.ErrorContains(t, err, "not under the sandbox's log directory")
}

func TestResources(t *testing.T) {
	for _, tc := range []struct {
		name              string
		requests, limits  corev1.ResourceList
		shares, quota, mm int64
	}{
		{name: "none: minimum shares, no quota", shares: 2},
		{name: "limit only: shares from the limit", limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}, shares: 2048, quota: 200000},
		{name: "tiny limit: minimum quota", limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")}, shares: 2, quota: 1000},
		{name: "memory", limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}, shares: 2, mm: 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := resources(&corev1.Container{Resources: corev1.ResourceRequirements{Requests: tc.requests, Limits: tc.limits}})
			assert.Equal(t, tc.shares, r.CpuShares)
			assert.Equal(t, tc.quota, r.CpuQuota)
			assert.Equal(t, tc.mm, r.MemoryLimitInBytes)
		})
	}
}

func TestContainerSecurityContext(t *testing.T) {
	unmasked := corev1.UnmaskedProcMount
	for _, tc := range []struct {
		name  string
		pod   *corev1.PodSecurityContext
		c     *corev1.SecurityContext
		check func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext)
	}{{
		name: "unset: default masked and read-only paths, unconfined seccomp, runtime's AppArmor",
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			assert.Equal(t, defaultMaskedPaths, sc.MaskedPaths)
			assert.Equal(t, defaultReadonlyPaths, sc.ReadonlyPaths)
			assert.Equal(t, runtimeapi.SecurityProfile_Unconfined, sc.Seccomp.ProfileType)
			assert.Nil(t, sc.Apparmor)
			assert.Nil(t, sc.RunAsUser)
			assert.False(t, sc.NoNewPrivs, "allowPrivilegeEscalation unset")
		},
	}, {
		name: "the pod's user unless the container's",
		pod:  &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1), RunAsGroup: ptr.To[int64](2)},
		c:    &corev1.SecurityContext{RunAsUser: ptr.To[int64](3)},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			assert.Equal(t, int64(3), sc.RunAsUser.Value)
			assert.Equal(t, int64(2), sc.RunAsGroup.Value)
		},
	}, {
		name: "capabilities, read-only root, no new privileges",
		c: &corev1.SecurityContext{
			Capabilities:             &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"ALL"}},
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
		},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			assert.Equal(t, &runtimeapi.Capability{AddCapabilities: []string{"NET_ADMIN"}, DropCapabilities: []string{"ALL"}}, sc.Capabilities)
			assert.True(t, sc.ReadonlyRootfs)
			assert.True(t, sc.NoNewPrivs)
		},
	}, {
		name: "privileged: nothing masked",
		c:    &corev1.SecurityContext{Privileged: ptr.To(true)},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			assert.True(t, sc.Privileged)
			assert.Empty(t, sc.MaskedPaths)
			assert.Empty(t, sc.ReadonlyPaths)
		},
	}, {
		name: "procMount Unmasked: nothing masked",
		c:    &corev1.SecurityContext{ProcMount: &unmasked},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			assert.NotNil(t, sc.MaskedPaths)
			assert.Empty(t, sc.MaskedPaths)
			assert.Empty(t, sc.ReadonlyPaths)
		},
	}, {
		name: "seccomp Localhost under the profile root, the pod's AppArmor",
		pod:  &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("prof")}},
		c:    &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			assert.Equal(t, &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: "/seccomp/p.json"}, sc.Seccomp)
			assert.Equal(t, &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: "prof"}, sc.Apparmor)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: tc.pod}}
			c := &corev1.Container{SecurityContext: tc.c}
			tc.check(t, containerSecurityContext(pod, c, false, "/seccomp"))
		})
	}
}

func TestAdmitPrivileged(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		HostNetwork: true,
		Containers:  []corev1.Container{{Name: "a"}, {Name: "b", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}},
	}}
	r := &Runtime{}
	err := r.Admit(pod)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.containers[1].securityContext.privileged")
	assert.Contains(t, err.Error(), "--allow-privileged")
	r.cfg.AllowPrivileged = true
	assert.NoError(t, r.Admit(pod))
}

func TestContainerStatusMapping(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     *runtimeapi.ContainerStatus
		state  lifecycle.ContainerState
		reason string
	}{
		{name: "running", in: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_RUNNING, StartedAt: 2}, state: lifecycle.ContainerRunning},
		{name: "completed: no reason", in: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, Reason: "Completed"}, state: lifecycle.ContainerExited},
		{name: "error: no reason", in: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, Reason: "Error", ExitCode: 1}, state: lifecycle.ContainerExited},
		{name: "OOMKilled stays", in: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, Reason: "OOMKilled"}, state: lifecycle.ContainerExited, reason: "OOMKilled"},
		{name: "StartError stays", in: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, Reason: "StartError", ExitCode: 128}, state: lifecycle.ContainerExited, reason: "StartError"},
		{name: "created", in: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_CREATED}, state: lifecycle.ContainerCreated},
		{name: "unknown", in: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_UNKNOWN}, state: lifecycle.ContainerUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Id, tc.in.ImageRef, tc.in.LogPath = "id", "sha256:x", "/logs/c/0.log"
			tc.in.Metadata = &runtimeapi.ContainerMetadata{Name: "c", Attempt: 1}
			tc.in.Labels = map[string]string{LabelManaged: "true", lifecycle.LabelPodUID: "u"}
			st := containerStatus(tc.in)
			assert.Equal(t, tc.state, st.State)
			assert.Equal(t, tc.reason, st.Reason)
			assert.Equal(t, "sha256:x", st.ImageRef)
			assert.Equal(t, "/logs/c/0.log", st.LogPath)
			assert.Equal(t, map[string]string{lifecycle.LabelPodUID: "u"}, st.Labels)
			assert.Equal(t, nsTime(tc.in.StartedAt), st.StartedAt)
		})
	}
}

func TestRelistEvents(t *testing.T) {
	running := containerRecord{sandboxID: "s", state: lifecycle.ContainerRunning}
	exited := containerRecord{sandboxID: "s", state: lifecycle.ContainerExited}
	created := containerRecord{sandboxID: "s", state: lifecycle.ContainerCreated}
	for _, tc := range []struct {
		name      string
		last, now map[string]containerRecord
		want      map[string]lifecycle.ContainerEventType
	}{
		{name: "unchanged: nothing", last: map[string]containerRecord{"a": running}, now: map[string]containerRecord{"a": running}, want: map[string]lifecycle.ContainerEventType{}},
		{name: "created then running: started", last: map[string]containerRecord{"a": created}, now: map[string]containerRecord{"a": running}, want: map[string]lifecycle.ContainerEventType{"a": lifecycle.ContainerStartedEvent}},
		{name: "new and running: started", last: map[string]containerRecord{}, now: map[string]containerRecord{"a": running}, want: map[string]lifecycle.ContainerEventType{"a": lifecycle.ContainerStartedEvent}},
		{name: "running then exited: exited", last: map[string]containerRecord{"a": running}, now: map[string]containerRecord{"a": exited}, want: map[string]lifecycle.ContainerEventType{"a": lifecycle.ContainerExitedEvent}},
		{name: "started and exited between listings: exited", last: map[string]containerRecord{"a": created}, now: map[string]containerRecord{"a": exited}, want: map[string]lifecycle.ContainerEventType{"a": lifecycle.ContainerExitedEvent}},
		{name: "running then gone: exited", last: map[string]containerRecord{"a": running}, now: map[string]containerRecord{}, want: map[string]lifecycle.ContainerEventType{"a": lifecycle.ContainerExitedEvent}},
		{name: "exited then removed: nothing", last: map[string]containerRecord{"a": exited}, now: map[string]containerRecord{}, want: map[string]lifecycle.ContainerEventType{}},
		{name: "created: nothing", last: map[string]containerRecord{}, now: map[string]containerRecord{"a": created}, want: map[string]lifecycle.ContainerEventType{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]lifecycle.ContainerEventType{}
			for _, ev := range relistEvents(tc.last, tc.now) {
				assert.Equal(t, "s", ev.SandboxID)
				got[ev.ContainerID] = ev.Type
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestContainerEventMapping(t *testing.T) {
	ours := map[string]string{LabelManaged: "true", lifecycle.LabelPodUID: "u"}
	for _, tc := range []struct {
		name   string
		typ    runtimeapi.ContainerEventType
		labels map[string]string
		want   *lifecycle.ContainerEventType
	}{
		{name: "started", typ: runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT, labels: ours, want: ptr.To(lifecycle.ContainerStartedEvent)},
		{name: "stopped is exited", typ: runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT, labels: ours, want: ptr.To(lifecycle.ContainerExitedEvent)},
		{name: "created: none", typ: runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, labels: ours},
		{name: "deleted: none", typ: runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT, labels: ours},
		{name: "another client's container: none", typ: runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT, labels: map[string]string{lifecycle.LabelPodUID: "u"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := containerEvent(&runtimeapi.ContainerEventResponse{
				ContainerId: "c", ContainerEventType: tc.typ, PodSandboxStatus: &runtimeapi.PodSandboxStatus{Id: "s"},
				ContainersStatuses: []*runtimeapi.ContainerStatus{{Id: "other"}, {Id: "c", Labels: tc.labels}},
			})
			if tc.want == nil {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			assert.Equal(t, lifecycle.ContainerEvent{ContainerID: "c", SandboxID: "s", Type: *tc.want, Labels: map[string]string{lifecycle.LabelPodUID: "u"}}, ev)
		})
	}
}
