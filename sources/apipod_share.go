package sources

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
//
// Whole parts are shared the same way when they are equal in every byte of their encoding: the
// conditions (the same in every pod that became Running in the same second: the API server keeps
// whole seconds; their start times and running states too), the containers of a pod template,
// the default tolerations, the empty security context, the labels, the host IPs and the spec's
// optional numbers and flags. This relies on what the watch store promises its readers: its objects
// are read-only. Every shared slice has no room beyond its length, so that even an append to it
// copies it instead of writing into the other pods'. With the strings, 4360 → 1660 B live of
// the heap benchmark's pod, started 100 a second (BenchmarkAPIPodLiveHeap); each trim costs
// about 3 µs more (encoding the parts), allocating nothing more.
type apiPodSharer struct {
	mu              sync.Mutex
	strings         internTable
	conditions      valueTable[[]corev1.PodCondition]
	containers      valueTable[[]corev1.Container]
	tolerations     valueTable[[]corev1.Toleration]
	hostIPs         valueTable[[]corev1.HostIP]
	securityContext valueTable[*corev1.PodSecurityContext]
	maps            valueTable[map[string]string]
	times           valueTable[*metav1.Time]
	running         valueTable[*corev1.ContainerStateRunning]
	int64s          scalarTable[int64]
	int32s          scalarTable[int32]
	bools           scalarTable[bool]
	preemption      scalarTable[corev1.PreemptionPolicy]
	buf             []byte // the encoding being looked up
}

func newAPIPodSharer() *apiPodSharer {
	return &apiPodSharer{
		strings:         newInternTable(internMaxEntries, internMaxLen),
		conditions:      newValueTable[[]corev1.PodCondition](valueMaxEntries, valueMaxKey),
		containers:      newValueTable[[]corev1.Container](valueMaxEntries, valueMaxKey),
		tolerations:     newValueTable[[]corev1.Toleration](valueMaxEntries, valueMaxKey),
		hostIPs:         newValueTable[[]corev1.HostIP](valueMaxEntries, valueMaxKey),
		securityContext: newValueTable[*corev1.PodSecurityContext](valueMaxEntries, valueMaxKey),
		maps:            newValueTable[map[string]string](valueMaxEntries, valueMaxKey),
		times:           newValueTable[*metav1.Time](valueMaxEntries, valueMaxKey),
		running:         newValueTable[*corev1.ContainerStateRunning](valueMaxEntries, valueMaxKey),
		int64s:          newScalarTable[int64](valueMaxEntries),
		int32s:          newScalarTable[int32](valueMaxEntries),
		bools:           newScalarTable[bool](valueMaxEntries),
		preemption:      newScalarTable[corev1.PreemptionPolicy](valueMaxEntries),
	}
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
	// valueMaxEntries bounds each table of shared parts: the pod templates and the seconds in
	// which pods start that a node sees at once. A flood fills one with at most valueMaxEntries
	// parts with encodings of at most valueMaxKey bytes (1 MiB).
	valueMaxEntries = 256
	valueMaxKey     = 4096
)

// share replaces pod's low-cardinality strings and equal parts with shared ones. The pod's own
// fields are set in place (the pod is the watch store's own, freshly decoded), but never what
// they point to once it may be shared: a part not found in its table is copied before its
// strings are interned. A second trim of the same pod (WithTransform allows it) may find parts
// the table held before it started over, which other pods share.
func (s *apiPodSharer) share(pod *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.strings.intern

	m := &pod.ObjectMeta
	m.Namespace, m.GenerateName = in(m.Namespace), in(m.GenerateName)
	for i := range m.OwnerReferences { // the pod's own list
		o := &m.OwnerReferences[i] // the replica set's or job's: the same for its pods
		o.APIVersion, o.Kind, o.Name, o.UID = in(o.APIVersion), in(o.Kind), in(o.Name), types.UID(in(string(o.UID)))
	}
	m.Labels = s.shareMap(m.Labels)
	if len(m.Annotations) > 1 { // apiSourceOnly is shared already
		m.Annotations = s.shareMap(m.Annotations)
	}

	sp := &pod.Spec
	sp.NodeName, sp.ServiceAccountName, sp.DeprecatedServiceAccount = in(sp.NodeName), in(sp.ServiceAccountName), in(sp.DeprecatedServiceAccount)
	sp.SchedulerName, sp.PriorityClassName, sp.Subdomain = in(sp.SchedulerName), in(sp.PriorityClassName), in(sp.Subdomain)
	sp.RestartPolicy = corev1.RestartPolicy(in(string(sp.RestartPolicy)))
	sp.DNSPolicy = corev1.DNSPolicy(in(string(sp.DNSPolicy)))
	sp.PreemptionPolicy = s.preemption.share(sp.PreemptionPolicy)
	sp.TerminationGracePeriodSeconds, sp.ActiveDeadlineSeconds = s.int64s.share(sp.TerminationGracePeriodSeconds), s.int64s.share(sp.ActiveDeadlineSeconds)
	sp.Priority = s.int32s.share(sp.Priority)
	sp.EnableServiceLinks, sp.AutomountServiceAccountToken = s.bools.share(sp.EnableServiceLinks), s.bools.share(sp.AutomountServiceAccountToken)
	sp.InitContainers = shareSlice(s, &s.containers, sp.InitContainers, s.internContainers)
	sp.Containers = shareSlice(s, &s.containers, sp.Containers, s.internContainers)
	sp.Tolerations = shareSlice(s, &s.tolerations, sp.Tolerations, s.internTolerations)
	sp.SecurityContext = sharePointer(s, &s.securityContext, sp.SecurityContext)

	st := &pod.Status
	st.Phase, st.QOSClass = corev1.PodPhase(in(string(st.Phase))), corev1.PodQOSClass(in(string(st.QOSClass)))
	st.Reason, st.HostIP = in(st.Reason), in(st.HostIP)
	st.HostIPs = shareSlice(s, &s.hostIPs, st.HostIPs, func(ips []corev1.HostIP) { // the node's: the same in every pod
		for i := range ips {
			ips[i].IP = in(ips[i].IP)
		}
	})
	if conditionTimesDecoded(st.Conditions) {
		st.Conditions = shareSlice(s, &s.conditions, st.Conditions, s.internConditions)
	} else {
		s.internConditions(st.Conditions) // never shared: the pod's own
	}
	if st.StartTime != nil && decodedTime(*st.StartTime) {
		st.StartTime = sharePointer(s, &s.times, st.StartTime)
	}
	s.shareContainerStatuses(st.InitContainerStatuses)
	s.shareContainerStatuses(st.ContainerStatuses)
}

func (s *apiPodSharer) internConditions(conds []corev1.PodCondition) {
	in := s.strings.intern
	for i := range conds {
		c := &conds[i]
		c.Type, c.Status = corev1.PodConditionType(in(string(c.Type))), corev1.ConditionStatus(in(string(c.Status)))
		c.Reason, c.Message = in(c.Reason), in(c.Message)
	}
}

func (s *apiPodSharer) internTolerations(ts []corev1.Toleration) {
	in := s.strings.intern
	for i := range ts {
		t := &ts[i]
		t.Key, t.Value = in(t.Key), in(t.Value)
		t.Operator, t.Effect = corev1.TolerationOperator(in(string(t.Operator))), corev1.TaintEffect(in(string(t.Effect)))
	}
}

// internContainers interns the containers' own strings, not those of the lists they hold
// (ports, mounts): a copy of the containers shares those lists with the original.
func (s *apiPodSharer) internContainers(cs []corev1.Container) {
	in := s.strings.intern
	for i := range cs {
		c := &cs[i]
		c.Name, c.Image, c.WorkingDir = in(c.Name), in(c.Image), in(c.WorkingDir)
		c.ImagePullPolicy = corev1.PullPolicy(in(string(c.ImagePullPolicy)))
		c.TerminationMessagePath = in(c.TerminationMessagePath)
		c.TerminationMessagePolicy = corev1.TerminationMessagePolicy(in(string(c.TerminationMessagePolicy)))
	}
}

// shareContainerStatuses interns the statuses' strings in place (the list is the pod's own:
// with each container's ID in it, it is never shared) and shares their running states.
func (s *apiPodSharer) shareContainerStatuses(cs []corev1.ContainerStatus) {
	in := s.strings.intern
	for i := range cs {
		c := &cs[i]
		c.Name, c.Image, c.ImageID = in(c.Name), in(c.Image), in(c.ImageID)
		if r := c.State.Running; r != nil && decodedTime(r.StartedAt) {
			c.State.Running = sharePointer(s, &s.running, r)
		}
		c.Started = s.bools.share(c.Started)
		for _, state := range []*corev1.ContainerState{&c.State, &c.LastTerminationState} {
			// Waiting and terminated states are never shared: the pod's own.
			if w := state.Waiting; w != nil {
				w.Reason = in(w.Reason)
			}
			if t := state.Terminated; t != nil {
				t.Reason = in(t.Reason)
			}
		}
	}
}

// decodedTime reports whether t is as the decoder makes times: whole seconds (the encoding has
// no more) in the local zone. Only then is its encoding all of its value, so that one with the
// same encoding may stand for it.
func decodedTime(t metav1.Time) bool {
	return t.IsZero() || (t.Nanosecond() == 0 && t.Location() == time.Local)
}

func conditionTimesDecoded(conds []corev1.PodCondition) bool {
	for i := range conds {
		if !decodedTime(conds[i].LastTransitionTime) || !decodedTime(conds[i].LastProbeTime) {
			return false
		}
	}
	return true
}

// sharePointer returns the table's value equal to *v, or v once added to the table.
func sharePointer[T any, PT interface {
	*T
	encodable
}](s *apiPodSharer, t *valueTable[PT], v PT) PT {
	if v == nil {
		return v
	}
	var ok bool
	if s.buf, ok = appendEncoded(s.buf[:0], v, t.maxKey); !ok {
		return v
	}
	return t.share(s.buf, v)
}

// encodable is a decoded API type: its protobuf encoding is its value, every field of it.
type encodable interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// shareSlice returns the table's slice equal to items, or else a copy of items, interned and
// added to the table: a copy without room beyond its length (the decoder grows a list by
// appending: five conditions have room for eight, 1 KiB where 600 B are used), and never items
// itself, which may be shared.
func shareSlice[E any, PE interface {
	*E
	encodable
}](s *apiPodSharer, t *valueTable[[]E], items []E, intern func([]E)) []E {
	if len(items) == 0 {
		return items
	}
	s.buf = s.buf[:0]
	for i := range items {
		var ok bool
		if s.buf, ok = appendEncoded(s.buf, PE(&items[i]), t.maxKey); !ok {
			// Too large for the table (or not encodable): never shared, so the pod's own.
			intern(items)
			return items
		}
	}
	if shared, ok := t.get(s.buf); ok {
		return shared
	}
	own := slices.Clone(items)
	intern(own)
	return t.share(s.buf, own)
}

// shareMap returns the table's map equal to m, or else a copy of m with its values interned,
// added to the table (never m itself, which may be shared).
func (s *apiPodSharer) shareMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	size := 0
	keys := make([]string, 0, len(m))
	for k, v := range m {
		keys = append(keys, k)
		size += len(k) + len(v) + 2*binary.MaxVarintLen64
	}
	if size > s.maps.maxKey {
		return m // too large for the table
	}
	slices.Sort(keys)
	s.buf = s.buf[:0]
	for _, k := range keys {
		s.buf = binary.AppendUvarint(s.buf, uint64(len(k)))
		s.buf = append(s.buf, k...)
		s.buf = binary.AppendUvarint(s.buf, uint64(len(m[k])))
		s.buf = append(s.buf, m[k]...)
	}
	if shared, ok := s.maps.get(s.buf); ok {
		return shared
	}
	own := make(map[string]string, len(m))
	for k, v := range m {
		own[k] = s.strings.intern(v)
	}
	return s.maps.share(s.buf, own)
}

// appendEncoded appends v's encoding to buf, after its length so that a list's encoding is
// its elements' and nothing else's. It reports false, and buf may hold part of it, when buf
// would pass limit bytes (so that the buffer, kept for the next pod, stays within the tables'
// bound) or v cannot be encoded (not expected of a decoded object).
func appendEncoded(buf []byte, v encodable, limit int) ([]byte, bool) {
	n := v.Size()
	if len(buf)+binary.MaxVarintLen64+n > limit {
		return buf, false
	}
	buf = binary.AppendUvarint(buf, uint64(n))
	start := len(buf)
	buf = slices.Grow(buf, n)[:start+n]
	if _, err := v.MarshalToSizedBuffer(buf[start:]); err != nil {
		return buf[:start], false
	}
	return buf, true
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

// valueTable hands out one value for each encoding it has seen. It holds at most maxEntries
// values with encodings of at most maxKey bytes, and starts over when full. Not safe for
// concurrent use.
type valueTable[T any] struct {
	m          map[string]T
	maxEntries int
	maxKey     int
}

func newValueTable[T any](maxEntries, maxKey int) valueTable[T] {
	return valueTable[T]{m: make(map[string]T), maxEntries: maxEntries, maxKey: maxKey}
}

// get returns the value with encoding key.
func (t *valueTable[T]) get(key []byte) (T, bool) {
	v, ok := t.m[string(key)] // no copy of key to look it up
	return v, ok
}

// share returns the value with encoding key, adding v with it when there is none.
func (t *valueTable[T]) share(key []byte, v T) T {
	if len(key) > t.maxKey {
		return v
	}
	if c, ok := t.m[string(key)]; ok {
		return c
	}
	if len(t.m) >= t.maxEntries {
		clear(t.m)
	}
	t.m[string(key)] = v
	return v
}

// scalarTable hands out one pointer for each value it has seen (the spec's optional numbers
// and flags, a small allocation each). It holds at most maxEntries values and starts over when
// full. Not safe for concurrent use.
type scalarTable[T comparable] struct {
	m          map[T]*T
	maxEntries int
}

func newScalarTable[T comparable](maxEntries int) scalarTable[T] {
	return scalarTable[T]{m: make(map[T]*T), maxEntries: maxEntries}
}

// share returns the table's pointer to *p, or p once added to the table (nil for nil).
func (t *scalarTable[T]) share(p *T) *T {
	if p == nil {
		return nil
	}
	if c, ok := t.m[*p]; ok {
		return c
	}
	if len(t.m) >= t.maxEntries {
		clear(t.m)
	}
	t.m[*p] = p
	return p
}
