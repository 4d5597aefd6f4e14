package api

import (
	"encoding/json"
	"net/http"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/podutil"
)

// pods serves /pods: the pods bound to this node as the pod manager holds them, a v1 PodList.
// A static pod is shown as the API server knows it, under its mirror's name, namespace and UID
// when it has a mirror, so that a client can match it with what it lists from the API server;
// without one (standalone, or before the mirror exists) it is shown as it is. Static pods carry
// the provider's current status, as the kubelet gives them its status manager's: their mirror
// has the status only once written, and standalone there is none. API pods carry the status
// the pod manager holds.
func (rt Routes) pods(w http.ResponseWriter, r *http.Request) {
	regular, _ := rt.Pods.GetPodsAndMirrorPods()
	items := make([]corev1.Pod, 0, len(regular))
	for _, p := range regular {
		if !podutil.IsStaticPod(p) {
			items = append(items, *p)
			continue
		}
		shown := p.DeepCopy() // the pod manager's pods are shared
		if m, ok := rt.Pods.GetMirrorPodByPod(p); ok {
			shown.Name, shown.Namespace, shown.UID = m.Name, m.Namespace, m.UID
			shown.Status = m.Status
		}
		if st, err := rt.Provider.GetPodStatus(r.Context(), p.Namespace, p.Name); err == nil && st != nil {
			shown.Status = *st
		}
		items = append(items, *shown)
	}
	// In a stable order, so that two reads can be compared.
	sort.Slice(items, func(i, j int) bool {
		if items[i].Namespace != items[j].Namespace {
			return items[i].Namespace < items[j].Namespace
		}
		return items[i].Name < items[j].Name
	})
	writePodList(w, r, items)
}

// runningPods serves /runningpods/: the pods the provider runs, as it reports them (the
// kubelet's come from its container runtime, with the runtime's view of each pod).
func (rt Routes) runningPods(w http.ResponseWriter, r *http.Request) {
	running, err := rt.Provider.GetPods(r.Context())
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "Listing the provider's pods")
		http.Error(w, "listing the provider's pods: "+err.Error(), http.StatusInternalServerError)
		return
	}
	items := make([]corev1.Pod, 0, len(running))
	for _, p := range running {
		items = append(items, *p)
	}
	sort.Slice(items, func(i, j int) bool {
		return podutil.FullName(&items[i]) < podutil.FullName(&items[j])
	})
	writePodList(w, r, items)
}

// writePodList answers a v1 PodList in JSON, with its kind and apiVersion as the kubelet's.
func writePodList(w http.ResponseWriter, r *http.Request, items []corev1.Pod) {
	list := corev1.PodList{Items: items}
	list.Kind, list.APIVersion = "PodList", "v1"
	writeJSON(w, r, &list)
}

// writeJSON answers v as JSON with 200.
func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "Encoding an answer")
		http.Error(w, "encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
