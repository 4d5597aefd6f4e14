package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
)

// A pod the kubelet's own admission refuses is Failed as the kubelet writes it: its reason,
// "Pod was rejected: " and its message; nothing runs, and a restarted agent says the same.
func TestKubeletAdmissionRefusals(t *testing.T) {
	for _, tc := range []struct {
		name        string
		mutate      func(*corev1.Pod)
		reason, msg string
	}{
		{name: "windows", mutate: func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} },
			reason: "PodOSNotSupported", msg: "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS"},
		{name: "os label", mutate: func(p *corev1.Pod) { p.Labels = map[string]string{"kubernetes.io/os": "windows"} },
			reason: "PodOSSelectorNodeLabelDoesNotMatch", msg: "Pod was rejected: Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
		{name: "unsafe sysctl", mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "kernel.msgmax", Value: "10000"}}}
		}, reason: "SysctlForbidden", msg: `Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "runtime", mutate: func(*corev1.Pod) {}, reason: "NotAdmitted", msg: "Pod was rejected: spec.containers[0]: not here (--allow-it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.reason == "NotAdmitted" {
				h.rt.refuse = "spec.containers[0]: not here (--allow-it)"
			}
			pod := testPod("ad", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
			tc.mutate(pod)
			require.NoError(t, h.p.CreatePod(context.Background(), pod))
			h.eventually(pod.UID, "Failed", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
			s := h.status(pod.UID)
			assert.Equal(t, tc.reason, s.Reason)
			assert.Equal(t, tc.msg, s.Message)
			assert.Empty(t, h.rt.calls(), "nothing starts")
			assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Warning "+tc.reason+" "+strings.TrimPrefix(tc.msg, "Pod was rejected: "))

			h.stop()
			h.start()
			got, err := h.p.GetPodStatus(context.Background(), pod.Namespace, pod.Name)
			require.NoError(t, err)
			assert.Equal(t, tc.reason, got.Reason, "after a restart")
			assert.Equal(t, tc.msg, got.Message, "after a restart")
		})
	}
}

func TestSysctlAllowlist(t *testing.T) {
	kernel := version.MustParseGeneric("6.1.0")
	pod := func(hostNet bool, names ...string) *corev1.Pod {
		p := testPod("s", corev1.RestartPolicyAlways)
		p.Spec.HostNetwork = hostNet
		p.Spec.SecurityContext = &corev1.PodSecurityContext{}
		for _, n := range names {
			p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		old     bool // a kernel older than the newer safe sysctls
		unsafe  []string
		pod     *corev1.Pod
		refused string
	}{
		{name: "safe", pod: pod(false, "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_rmem")},
		{name: "safe with slashes", pod: pod(false, "net/ipv4/ip_local_port_range")},
		{name: "safe only on a newer kernel", old: true, pod: pod(false, "net.ipv4.tcp_rmem"), refused: `forbidden sysctl: "net.ipv4.tcp_rmem" not allowlisted`},
		{name: "unsafe", pod: pod(false, "kernel.msgmax"), refused: `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "allowed unsafe", unsafe: []string{"kernel.msgmax"}, pod: pod(false, "kernel.msgmax")},
		{name: "allowed unsafe pattern", unsafe: []string{"net.core.*"}, pod: pod(false, "net.core.somaxconn")},
		{name: "net with host network", pod: pod(true, "net.ipv4.ip_local_port_range"),
			refused: `forbidden sysctl: "net.ipv4.ip_local_port_range" not allowed with host Net enabled`},
		{name: "ipc with host ipc", pod: func() *corev1.Pod { p := pod(false, "kernel.shm_rmid_forced"); p.Spec.HostIPC = true; return p }(),
			refused: `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := kernel
			if tc.old {
				k = version.MustParseGeneric("4.4.0")
			}
			w, err := newSysctlAllowlist(k, tc.unsafe)
			require.NoError(t, err)
			err = w.admit(tc.pod)
			if tc.refused == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.refused, err.Error())
			assert.Equal(t, "SysctlForbidden", refusalReason(err))
		})
	}
}

// A pattern the kubelet refuses at start-up is refused, naming the flag.
func TestSysctlAllowlistRefusesBadPatterns(t *testing.T) {
	for pattern, want := range map[string]string{
		"kernel.msg*x":  "must have at most 253 characters and match regex",
		"Kernel.msgmax": "must have at most 253 characters and match regex",
		"vm.swappiness": `the sysctls "vm.swappiness" are not known to be namespaced`,
		"kernel.*":      `the sysctls "kernel." are not known to be namespaced`,
	} {
		err := ValidateAllowedUnsafeSysctls([]string{pattern})
		require.Error(t, err, pattern)
		assert.Contains(t, err.Error(), want, pattern)
	}
	_, err := New(context.Background(), Config{Runtime: newFakeRuntime(nil), RuntimeName: "fake", RootDir: t.TempDir(), AllowedUnsafeSysctls: []string{"vm.swappiness"}})
	assert.ErrorContains(t, err, "--allowed-unsafe-sysctls")
}

// admissionNode is a Node of 1 CPU, 1Gi and room for pods pods, labelled disk=hdd.
func admissionNode(pods int64) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{"disk": "hdd"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("1"),
			corev1.ResourceMemory: resource.MustParse("1Gi"),
			corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
		}},
	}
}

// cpuPod is an API pod whose container requests cpu.
func cpuPod(uid, cpu string) *corev1.Pod {
	p := testPod(uid, corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	p.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	return p
}

func (h *harness) admitOn(node *corev1.Node) {
	h.stop()
	h.configure = func(c *Config) { c.Node = func() *corev1.Node { return node } }
	h.start()
}

func running(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning }

func failed(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed }

// A pod that does not fit the node is refused as the kubelet refuses it, with its reason and
// message, an event, and nothing started: too much cpu, a node selector the node does not
// match, one pod more than the node has room for. A restarted agent keeps the pods it admitted.
func TestNodeAdmissionRefusesWhatDoesNotFit(t *testing.T) {
	h := newHarness(t)
	h.admitOn(admissionNode(2))
	ctx := context.Background()

	first := cpuPod("first", "600m")
	require.NoError(t, h.p.CreatePod(ctx, first))
	h.eventually(first.UID, "Running", running)

	for _, tc := range []struct {
		pod             *corev1.Pod
		reason, message string
	}{
		{cpuPod("big", "600m"), "OutOfcpu", "Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000"},
		{func() *corev1.Pod {
			p := cpuPod("ssd", "")
			p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			return p
		}(), "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
	} {
		require.NoError(t, h.p.CreatePod(ctx, tc.pod))
		h.eventually(tc.pod.UID, "refused", failed)
		s := h.status(tc.pod.UID)
		assert.Equal(t, tc.reason, s.Reason)
		assert.Equal(t, "Pod was rejected: "+tc.message, s.Message)
		assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Warning "+tc.reason+" "+tc.message)
	}
	second := cpuPod("second", "")
	require.NoError(t, h.p.CreatePod(ctx, second))
	h.eventually(second.UID, "Running", running)
	third := cpuPod("third", "")
	require.NoError(t, h.p.CreatePod(ctx, third))
	h.eventually(third.UID, "refused", failed)
	assert.Equal(t, "OutOfpods", h.status(third.UID).Reason)
	assert.Equal(t, "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2", h.status(third.UID).Message)
	for _, c := range h.rt.calls() {
		assert.NotContains(t, c, "p-big", "nothing of a refused pod starts")
	}

	// The node shrinks while the agent is stopped: the pods it admitted are not admitted again.
	h.admitOn(admissionNode(1))
	for _, p := range []*corev1.Pod{first, second} {
		require.NoError(t, h.p.CreatePod(ctx, p))
		h.eventually(p.UID, "still Running after a restart", running)
	}
}

// A static pod that does not fit preempts what it needs of the API pods, as the kubelet's
// critical pod admission: the BestEffort pod rather than the Burstable one when that is
// enough, stopped and Failed with reason Preempting; the static pod then runs.
func TestCriticalPodPreempts(t *testing.T) {
	h := newHarness(t)
	h.admitOn(admissionNode(2))
	ctx := context.Background()
	burstable, bestEffort := cpuPod("burstable", "500m"), cpuPod("besteffort", "")
	for _, p := range []*corev1.Pod{burstable, bestEffort} {
		require.NoError(t, h.p.CreatePod(ctx, p))
		h.eventually(p.UID, "Running", running)
	}

	static := cpuPod("static", "400m")
	static.Annotations[podutil.ConfigSourceAnnotationKey] = podutil.FileSource
	require.NoError(t, h.p.CreatePod(ctx, static), "it fits on cpu; the node is out of pods")
	h.eventually(static.UID, "Running", running)

	h.eventually(bestEffort.UID, "preempted", failed)
	s := h.status(bestEffort.UID)
	assert.Equal(t, "Preempting", s.Reason)
	assert.Equal(t, "Preempted in order to admit critical pod", s.Message)
	c, ok := podstatus.Find(s.Conditions, corev1.DisruptionTarget)
	require.True(t, ok)
	assert.Equal(t, "Pod was preempted by Kubelet to accommodate a critical pod.", c.Message)
	assert.Equal(t, corev1.PodRunning, h.status(burstable.UID).Phase, "one pod freed is enough")
	assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Warning Preempting Preempted in order to admit critical pod")

	// A static pod with no pod it may preempt is refused, and the others go on.
	other := cpuPod("other-static", "2")
	other.Annotations[podutil.ConfigSourceAnnotationKey] = podutil.FileSource
	require.NoError(t, h.p.CreatePod(ctx, other))
	h.eventually(other.UID, "refused", failed)
	assert.Equal(t, "UnexpectedAdmissionError", h.status(other.UID).Reason)
	assert.Contains(t, h.status(other.UID).Message, "no set of running pods found to reclaim resources")
	assert.Equal(t, corev1.PodRunning, h.status(static.UID).Phase)
	assert.Equal(t, corev1.PodRunning, h.status(burstable.UID).Phase)
}

// TestPressureAdmission: under memory pressure a BestEffort API pod is refused as the kubelet
// refuses it (Failed, reason Evicted, "Pod was rejected: The node had condition:
// [MemoryPressure]. "); a Burstable one, a BestEffort one tolerating the memory-pressure taint
// and a static pod are admitted.
func TestPressureAdmission(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC))
	thresholds, err := eviction.ParseThresholdConfig(map[string]string{"memory.available": "1Gi"}, nil, nil, nil)
	require.NoError(t, err)
	measure := func(context.Context) (eviction.Observations, error) {
		a, c := resource.MustParse("100Mi"), resource.MustParse("8Gi")
		return eviction.Observations{eviction.SignalMemoryAvailable: {Available: &a, Capacity: &c}}, nil
	}
	p, err := New(context.Background(), Config{Runtime: newFakeRuntime(clk), RuntimeName: "fake", RootDir: t.TempDir(), Clock: clk,
		Eviction: &eviction.Config{Thresholds: thresholds, Measure: measure}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); assert.NoError(t, p.Run(ctx)) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, p.eviction.IsUnderMemoryPressure, 10*time.Second, 5*time.Millisecond)

	pod := func(uid string, mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{UID: k8stypes.UID("uid-" + uid), Namespace: "default", Name: uid,
				Annotations: map[string]string{podutil.ConfigSourceAnnotationKey: "api"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Command: []string{"sleep", "60"}}}},
		}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	refusal := func(pd *corev1.Pod) string {
		require.NoError(t, p.CreatePod(context.Background(), pd))
		st, err := p.GetPodStatus(context.Background(), pd.Namespace, pd.Name)
		require.NoError(t, err)
		if st.Phase != corev1.PodFailed {
			return ""
		}
		return st.Reason + ": " + st.Message
	}
	assert.Equal(t, "Evicted: Pod was rejected: The node had condition: [MemoryPressure]. ", refusal(pod("besteffort", nil)))
	assert.Empty(t, refusal(pod("burstable", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}
	})))
	assert.Empty(t, refusal(pod("tolerates", func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	})))
	assert.Empty(t, refusal(pod("static", func(p *corev1.Pod) { p.Annotations[podutil.ConfigSourceAnnotationKey] = "file" })))
}
