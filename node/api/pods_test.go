package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
)

// /pods lists what is bound here: an API pod as the pod manager holds it, a static pod under
// its mirror's identity with the provider's status, and a static pod without a mirror as it is.
func TestPods(t *testing.T) {
	e := newRouteEnv(t)
	api := testPod("ns", "web", "api-uid", podutil.APIServerSource, "main")
	mirrored := testPod("kube-system", "etcd-node-a", "static-uid", podutil.FileSource, "etcd")
	lone := testPod("kube-system", "lone-node-a", "lone-uid", podutil.FileSource, "c")
	e.run(t, api)
	e.run(t, mirrored)
	e.run(t, lone)
	e.pods.AddPod(mirrorOf(mirrored, "mirror-uid"))

	code, body := e.get(t, "/pods")
	require.Equal(t, http.StatusOK, code, body)
	var list corev1.PodList
	require.NoError(t, json.Unmarshal([]byte(body), &list), body)
	assert.Equal(t, "PodList", list.Kind)
	assert.Equal(t, "v1", list.APIVersion)
	require.Len(t, list.Items, 3, body)

	etcd, loneGot, web := list.Items[0], list.Items[1], list.Items[2] // sorted by namespace, name
	assert.Equal(t, "etcd-node-a", etcd.Name)
	assert.Equal(t, "mirror-uid", string(etcd.UID), "a static pod is shown as its mirror")
	assert.Equal(t, corev1.PodRunning, etcd.Status.Phase, "with the provider's status, newer than the mirror's")
	assert.Equal(t, "lone-uid", string(loneGot.UID), "without a mirror, the static pod as it is")
	assert.Equal(t, corev1.PodRunning, loneGot.Status.Phase)
	assert.Equal(t, "api-uid", string(web.UID))

	// Shown copies: the pod manager's pods are unchanged.
	held, ok := e.pods.GetPodByName("kube-system", "etcd-node-a")
	require.True(t, ok)
	assert.Equal(t, "static-uid", string(held.UID))
	assert.Empty(t, held.Status.Phase)
}

// /runningpods/ lists the provider's pods; other methods are not served.
func TestRunningPods(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))

	code, body := e.get(t, "/runningpods/")
	require.Equal(t, http.StatusOK, code, body)
	var list corev1.PodList
	require.NoError(t, json.Unmarshal([]byte(body), &list), body)
	require.Len(t, list.Items, 1, body)
	assert.Equal(t, "web", list.Items[0].Name)
	assert.Equal(t, "api-uid", string(list.Items[0].UID))

	code, body = e.get(t, "/runningpods/web")
	assert.Equal(t, http.StatusNotFound, code, body)

	resp, err := e.srv.Client().Post(e.srv.URL+"/pods", "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}
