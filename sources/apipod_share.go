package sources

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Decoding a pod allocates each of its strings on its own, and most of them are the same in
// every pod on a node: the namespace, the node's name and IP, the image, the policies, the
// condition types and the default tolerations. apiPodSharer (trimAPIPod's) hands those out as
// one shared copy, the way an intern table does, so that the watch store's pods hold them once:
// 480 B less of the heap benchmark's pod, 4360 → 3880 B live (BenchmarkAPIPodLiveHeap).
// Values that are different in every pod (name, UID, resourceVersion, pod IP, container IDs,
// times) are left alone: interning them would only churn the table.
//
// Sharing is safe because strings are immutable. The tables are bounded: when one is full it
// starts over (the copies already handed out stay as they are; the next pods share new ones),
// so a flood of distinct values costs at most one table's worth, never memory without limit.
type apiPodSharer struct {
	mu      sync.Mutex
	strings internTable
}

func newAPIPodSharer() *apiPodSharer {
	return &apiPodSharer{strings: newInternTable(internMaxEntries, internMaxLen)}
}

// apiPodValues is every API source's sharer: one per process, so that all the pods decoded in
// it share their values whichever source or agent decoded them.
var apiPodValues = newAPIPodSharer()

const (
	// internMaxEntries bounds an intern table: far more distinct low-cardinality values than a
	// node's pods carry (a few dozen per image and namespace), and at most internMaxEntries ×
	// internMaxLen bytes (256 KiB) when a flood fills it.
	internMaxEntries = 1024
	// internMaxLen is the longest string interned: image IDs with a digest are about 100 bytes.
	internMaxLen = 256
)

// share replaces pod's low-cardinality strings with shared copies, in place (the pod is the
// watch store's own, freshly decoded).
func (s *apiPodSharer) share(pod *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.strings.intern

	m := &pod.ObjectMeta
	m.Namespace, m.GenerateName = in(m.Namespace), in(m.GenerateName)
	for k, v := range m.Labels {
		m.Labels[k] = in(v) // same key: no allocation, and the loop may write it
	}
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i] // the replica set's or job's: the same for its pods
		o.APIVersion, o.Kind, o.Name, o.UID = in(o.APIVersion), in(o.Kind), in(o.Name), types.UID(in(string(o.UID)))
	}

	sp := &pod.Spec
	sp.NodeName, sp.ServiceAccountName, sp.DeprecatedServiceAccount = in(sp.NodeName), in(sp.ServiceAccountName), in(sp.DeprecatedServiceAccount)
	sp.SchedulerName, sp.PriorityClassName, sp.Subdomain = in(sp.SchedulerName), in(sp.PriorityClassName), in(sp.Subdomain)
	sp.RestartPolicy = corev1.RestartPolicy(in(string(sp.RestartPolicy)))
	sp.DNSPolicy = corev1.DNSPolicy(in(string(sp.DNSPolicy)))
	if sp.PreemptionPolicy != nil {
		*sp.PreemptionPolicy = corev1.PreemptionPolicy(in(string(*sp.PreemptionPolicy)))
	}
	for i := range sp.Tolerations {
		t := &sp.Tolerations[i]
		t.Key, t.Value = in(t.Key), in(t.Value)
		t.Operator, t.Effect = corev1.TolerationOperator(in(string(t.Operator))), corev1.TaintEffect(in(string(t.Effect)))
	}
	s.shareContainers(sp.InitContainers)
	s.shareContainers(sp.Containers)

	st := &pod.Status
	st.Phase, st.QOSClass = corev1.PodPhase(in(string(st.Phase))), corev1.PodQOSClass(in(string(st.QOSClass)))
	st.Reason, st.HostIP = in(st.Reason), in(st.HostIP)
	for i := range st.HostIPs {
		st.HostIPs[i].IP = in(st.HostIPs[i].IP)
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Status = corev1.PodConditionType(in(string(c.Type))), corev1.ConditionStatus(in(string(c.Status)))
		c.Reason, c.Message = in(c.Reason), in(c.Message)
	}
	s.shareContainerStatuses(st.InitContainerStatuses)
	s.shareContainerStatuses(st.ContainerStatuses)
}

func (s *apiPodSharer) shareContainers(cs []corev1.Container) {
	in := s.strings.intern
	for i := range cs {
		c := &cs[i]
		c.Name, c.Image, c.WorkingDir = in(c.Name), in(c.Image), in(c.WorkingDir)
		c.ImagePullPolicy = corev1.PullPolicy(in(string(c.ImagePullPolicy)))
		c.TerminationMessagePath = in(c.TerminationMessagePath)
		c.TerminationMessagePolicy = corev1.TerminationMessagePolicy(in(string(c.TerminationMessagePolicy)))
		for j := range c.Ports {
			p := &c.Ports[j]
			p.Name, p.Protocol = in(p.Name), corev1.Protocol(in(string(p.Protocol)))
		}
		for j := range c.VolumeMounts {
			c.VolumeMounts[j].MountPath = in(c.VolumeMounts[j].MountPath) // the name may be the pod's own (the token's)
		}
	}
}

func (s *apiPodSharer) shareContainerStatuses(cs []corev1.ContainerStatus) {
	in := s.strings.intern
	for i := range cs {
		c := &cs[i]
		c.Name, c.Image, c.ImageID = in(c.Name), in(c.Image), in(c.ImageID)
		for _, state := range []*corev1.ContainerState{&c.State, &c.LastTerminationState} {
			if w := state.Waiting; w != nil {
				w.Reason = in(w.Reason)
			}
			if t := state.Terminated; t != nil {
				t.Reason = in(t.Reason)
			}
		}
	}
}

// internTable hands out one copy of each string it has seen. It holds at most maxEntries
// strings of at most maxLen bytes, and starts over when full. Not safe for concurrent use.
type internTable struct {
	m          map[string]string
	maxEntries int
	maxLen     int
}

func newInternTable(maxEntries, maxLen int) internTable {
	return internTable{m: make(map[string]string), maxEntries: maxEntries, maxLen: maxLen}
}

// intern returns the table's copy of s, adding s when it has none.
func (t *internTable) intern(s string) string {
	if s == "" || len(s) > t.maxLen {
		return s
	}
	if c, ok := t.m[s]; ok {
		return c
	}
	if len(t.m) >= t.maxEntries {
		clear(t.m)
	}
	// A copy of its own: s could be part of a larger buffer that the table would keep alive.
	c := strings.Clone(s)
	t.m[c] = c
	return c
}
