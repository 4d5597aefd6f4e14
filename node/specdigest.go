package node

import (
	"crypto/sha256"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// specDigest identifies a pod's spec and labels: what the provider was given, kept instead of
// a copy of the pod. Two pods have the same digest when their specs and labels encode alike.
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
	for _, k := range slices.Sorted(maps.Keys(pod.Labels)) {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(pod.Labels[k]))
		h.Write([]byte{0})
	}
	var d specDigest
	h.Sum(d[:0])
	return d
}
