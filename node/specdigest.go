package node

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
)

// specDigest identifies a pod's spec, labels and annotations: what the provider was given,
// kept instead of a copy of the pod. Two pods have the same digest when their specs, labels and
// annotations encode alike. Annotations count because a provider shows them (the downward API
// in volumes: the kubelet rewrites those files when they change), except the two the agent
// stamps itself (config.source, config.seen), which a restarted agent stamps anew.
type specDigest [sha256.Size]byte

// digestSpec hashes the spec's protobuf encoding, which is deterministic (map keys sorted),
// treats nil and empty alike and writes quantities in canonical form — so, like
// equality.Semantic, "1000m" and "1" agree and a pod re-read from the API server does not
// look changed.
func digestSpec(pod *corev1.Pod) specDigest {
	h := sha256.New()
	b, err := pod.Spec.Marshal()
	if err != nil {
		// Not expected for a decoded pod; the text form still tells specs apart.
		b = []byte(pod.Spec.String())
	}
	h.Write(b)
	// Each map is preceded by its number of entries, so that a label and an annotation of
	// the same key and value do not digest alike.
	writeMap := func(m map[string]string, skip func(string) bool) {
		keys := slices.DeleteFunc(slices.Sorted(maps.Keys(m)), skip)
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(keys))))
		for _, k := range keys {
			h.Write([]byte(k))
			h.Write([]byte{0})
			h.Write([]byte(m[k]))
			h.Write([]byte{0})
		}
	}
	writeMap(pod.Labels, func(string) bool { return false })
	writeMap(pod.Annotations, func(k string) bool {
		return k == podutil.ConfigSourceAnnotationKey || k == podutil.ConfigFirstSeenAnnotationKey
	})
	// The statuses of the readiness gates' conditions, which others set: the provider is told
	// (UpdatePod) when one changes, for the pod's Ready.
	for _, gate := range pod.Spec.ReadinessGates {
		status := corev1.ConditionStatus("")
		if c, ok := podstatus.Find(pod.Status.Conditions, gate.ConditionType); ok {
			status = c.Status
		}
		h.Write([]byte(string(gate.ConditionType) + "\x00" + string(status) + "\x00"))
	}
	var d specDigest
	h.Sum(d[:0])
	return d
}
