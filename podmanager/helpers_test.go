package podmanager

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podutil"
)

const testNode = "node-a"

// staticPod is a file pod as sources/ builds it: the hash is the UID.
func staticPod(name string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name + "-" + testNode, Namespace: "default", UID: uid,
			Annotations: map[string]string{
				podutil.ConfigSourceAnnotationKey: podutil.FileSource,
				podutil.ConfigHashAnnotationKey:   string(uid),
			},
		},
		Spec: corev1.PodSpec{NodeName: testNode},
	}
}

// mirrorOf is the API server's mirror of static (uid is the mirror's own UID).
func mirrorOf(static *corev1.Pod, uid types.UID) *corev1.Pod {
	m := static.DeepCopy()
	m.UID = uid
	m.Annotations[podutil.ConfigMirrorAnnotationKey] = podutil.Hash(static)
	return m
}

// apiPod is a pod scheduled to this node through the API server.
func apiPod(name string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: uid,
			Annotations: map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource},
		},
		Spec: corev1.PodSpec{NodeName: testNode},
	}
}

func uids(pods []*corev1.Pod) []types.UID {
	out := make([]types.UID, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.UID)
	}
	return out
}
