package e2ecri

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/test/support/podwait"
	"github.com/vk-static/vk-static/test/support/testenv"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// TestStaticPodFromRegistry: a static pod whose image comes from the 127.0.0.1 registry runs
// in containerd, its mirror reports the runtime's image and container IDs, and kubectl logs
// -f, exec, port-forward and the resource metrics reach the container through the API server.
func TestStaticPodFromRegistry(t *testing.T) {
	a := startAgent(t)
	port, err := testenv.FreePort()
	require.NoError(t, err)
	pod := imagePod("web", workloadImage, "log", "--every", "100ms")
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
		Name: "web", Image: workloadImage, Args: []string{"serve", "--port", strconv.Itoa(port)}})
	a.writePod(pod)
	p := a.waitMirror("web", 60*time.Second, "Running, both containers running", func(p *corev1.Pod) error {
		if err := podwait.MainRunning(p); err != nil {
			return err
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running == nil {
				return fmt.Errorf("%s: %s", cs.Name, podwait.Describe(cs))
			}
		}
		return nil
	})
	rs := runtimeService(t)
	inRuntime := runtimeContainers(t, rs)
	for _, cs := range p.Status.ContainerStatuses {
		id, ok := strings.CutPrefix(cs.ContainerID, "containerd://")
		require.True(t, ok, "%s: containerID %q, want containerd://…", cs.Name, cs.ContainerID)
		c := inRuntime[id]
		require.NotNil(t, c, "%s: container %s is not in containerd", cs.Name, id)
		assert.Equal(t, cs.Name, c.Metadata.Name)
		st, err := rs.ContainerStatus(context.Background(), id, false)
		require.NoError(t, err)
		// The runtime's image reference of the container: its image ID or its repository digest.
		assert.Contains(t, []string{c.ImageRef, st.GetStatus().GetImageRef()}, cs.ImageID, "%s: imageID", cs.Name)
		assert.Contains(t, cs.ImageID, "sha256:", "%s: imageID", cs.Name)
		assert.Equal(t, workloadImage, cs.Image)
	}
	k := newKubectl(t)
	mirror := a.MirrorName("web")

	t.Run("logs -f streams", func(t *testing.T) {
		s := k.stream(t, "logs", "-f", mirror, "-c", "main")
		first := s.next(t, 30*time.Second)
		// Lines keep coming after kubectl printed what was there: it follows the file.
		var last string
		for range 30 {
			last = s.next(t, 10*time.Second)
		}
		assert.True(t, strings.HasPrefix(first, "tick "), "first line %q", first)
		assert.NotEqual(t, first, last)
	})

	t.Run("exec runs in the image's filesystem", func(t *testing.T) {
		out := k.output(t, "exec", mirror, "-c", "main", "--", "/workload", "cat", testimage.MarkerPath)
		assert.Equal(t, testimage.DefaultMarker, out)
		_, err := os.Stat(testimage.MarkerPath)
		require.True(t, os.IsNotExist(err), "the host has %s: the check proves nothing", testimage.MarkerPath)
		assert.Contains(t, strings.Fields(k.output(t, "exec", mirror, "-c", "main", "--", "/workload", "ls", "/")), "workload")
	})

	t.Run("port-forward reaches the served port", func(t *testing.T) {
		local, err := testenv.FreePort()
		require.NoError(t, err)
		s := k.stream(t, "port-forward", "--address", "127.0.0.1", mirror, fmt.Sprintf("%d:%d", local, port))
		assert.Contains(t, s.next(t, 30*time.Second), "Forwarding from 127.0.0.1:"+strconv.Itoa(local))
		var body string
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", local))
			require.NoError(c, err)
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			require.NoError(c, err)
			body = string(data)
		}, 20*time.Second, 200*time.Millisecond, "GET through the forwarded port")
		assert.True(t, strings.HasPrefix(body, "hello from "), "body %q", body)
		assert.Contains(t, s.next(t, 10*time.Second), "Handling connection for "+strconv.Itoa(local))
	})

	t.Run("metrics/resource has the containers' cpu and memory", func(t *testing.T) {
		// Straight from the agent's kubelet API, as metrics-server reads it (the API server's
		// nodes/proxy refuses a node at a loopback address), with a client certificate of the
		// cluster CA that the agent's SubjectAccessReview allows.
		client := clusterAdminHTTP(t)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			resp, err := client.Get("https://127.0.0.1:" + strconv.Itoa(a.APIPort) + "/metrics/resource")
			require.NoError(c, err)
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(c, err)
			require.Equal(c, http.StatusOK, resp.StatusCode, "%s", data)
			for _, container := range []string{"main", "web"} {
				for _, metric := range []string{"container_cpu_usage_seconds_total", "container_memory_working_set_bytes"} {
					v, ok := sample(string(data), metric, `container="`+container+`"`, `pod="`+mirror+`"`, `namespace="default"`)
					if assert.True(c, ok, "no %s of %s in:\n%s", metric, container, data) {
						assert.Positive(c, v, "%s of %s", metric, container)
					}
				}
			}
		}, 30*time.Second, 500*time.Millisecond, "/metrics/resource")
	})

	a.removePods("web")
	nothingLeft(t)
}

// sample is the value of metric's sample whose labels include every one of labels
// (name="value" each), in the Prometheus text format.
func sample(text, metric string, labels ...string) (float64, bool) {
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, metric+"{")
		if !ok {
			continue
		}
		set, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(","+set+",", ","+l+",")
		}
		if !all {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		return v, err == nil
	}
	return 0, false
}

// clusterAdminHTTP is an HTTPS client with a client certificate of the cluster CA in
// system:masters, for the agent's kubelet API (its certificate is self-signed: not verified).
func clusterAdminHTTP(t *testing.T) *http.Client {
	t.Helper()
	certPEM, keyPEM, err := env.IssueClientCert("e2ecri-metrics", "system:masters")
	require.NoError(t, err)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	client := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			Certificates:       []tls.Certificate{cert},
			InsecureSkipVerify: true, //nolint:gosec // the agent's self-signed certificate; only the answer matters
		}},
		Timeout: 10 * time.Second,
	}
	t.Cleanup(client.CloseIdleConnections)
	return client
}
