package api

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider/mock"
)

// The log of an API pod's container and of a static pod's, by the name the API server knows
// (the mirror's, which is the static pod's), shaped by the kubelet's query parameters.
func TestContainerLogs(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main", "side"))
	static := testPod("kube-system", "etcd-node-a", "static-uid", podutil.FileSource, "etcd")
	e.run(t, static)
	e.pods.AddPod(mirrorOf(static, "mirror-uid"))

	code, body := e.get(t, "/containerLogs/ns/web/main")
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "mock: created container main (image img-main)\nmock: started container main\n", body)

	code, body = e.get(t, "/containerLogs/kube-system/etcd-node-a/etcd")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "mock: started container etcd\n")

	for query, want := range map[string]string{
		"tailLines=1":                     "mock: started container main\n",
		"tail=1":                          "mock: started container main\n", // the kubelet's old name
		"tail=all":                        "mock: created container main (image img-main)\nmock: started container main\n",
		"tailLines=0":                     "", // no lines, which the provider's Tail cannot say
		"limitBytes=4":                    "mock",
		"tailLines=1&timestamps=true":     routeEpoch.Format(time.RFC3339Nano) + " mock: started container main\n",
		"sinceTime=2030-01-01T00:00:00Z":  "",
		"sinceSeconds=3600&follow=false":  "mock: created container main (image img-main)\nmock: started container main\n",
		"tailLines=1&previous=false&x=1":  "mock: started container main\n",
		"tailLines=1&sinceTime=&follow=0": "mock: started container main\n",
	} {
		code, body := e.get(t, "/containerLogs/ns/web/main?"+query)
		assert.Equal(t, http.StatusOK, code, "%s: %s", query, body)
		assert.Equal(t, want, body, query)
	}
}

// Bad query parameters are 400 naming the parameter; unknown pods and containers 404, a log the
// provider does not have (no previous instance) 400 with its reason; names
// that are not names (traversal, escaped slashes) 400 or no route; a provider without logs 501.
func TestContainerLogsRejects(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))

	for query, param := range map[string]string{
		"follow=maybe":         "follow",
		"timestamps=2":         "timestamps",
		"previous=yes!":        "previous",
		"tailLines=-1":         "tailLines",
		"tailLines=ten":        "tailLines",
		"tail=-1":              "tailLines",
		"limitBytes=0":         "limitBytes",
		"limitBytes=1e3":       "limitBytes",
		"sinceSeconds=0":       "sinceSeconds",
		"sinceSeconds=-5":      "sinceSeconds",
		"sinceTime=yesterday":  "sinceTime",
		"sinceTime=2026-01-02": "sinceTime",
		"sinceSeconds=10&sinceTime=2026-01-02T00:00:00Z": "sinceSeconds, sinceTime",
	} {
		code, body := e.get(t, "/containerLogs/ns/web/main?"+query)
		assert.Equal(t, http.StatusBadRequest, code, "%s: %s", query, body)
		assert.True(t, strings.HasPrefix(body, param+":"), "%s: %s", query, body)
	}

	code, body := e.get(t, "/containerLogs/ns/nope/main")
	assert.Equal(t, http.StatusNotFound, code, body)
	assert.Contains(t, body, `pod "nope" does not exist`)
	code, body = e.get(t, "/containerLogs/ns/web/nope")
	assert.Equal(t, http.StatusNotFound, code, body)
	assert.Contains(t, body, `container "nope" not found in pod "web"`)
	code, body = e.get(t, "/containerLogs/other/web/main")
	assert.Equal(t, http.StatusNotFound, code, body)
	// It has not restarted: 400 with the reason, as the kubelet answers (a 404's body never
	// reaches kubectl).
	code, body = e.get(t, "/containerLogs/ns/web/main?previous=true")
	assert.Equal(t, http.StatusBadRequest, code, body)
	assert.NotEmpty(t, body)

	for _, path := range []string{
		"/containerLogs/ns/..%2F..%2Fetc/main",
		"/containerLogs/ns/web%2F..%2Fweb/main",
		"/containerLogs/ns/web/..%2Fmain",
		"/containerLogs/..%2Fns/web/main",
		"/containerLogs/ns/Web/main",
		"/containerLogs/ns/web/main%00",
	} {
		code, body := e.get(t, path)
		assert.Equal(t, http.StatusBadRequest, code, "%s: %s", path, body)
		assert.Contains(t, body, "invalid", path)
	}
	// An unescaped ".." is cleaned away by the mux (a redirect), leaving too few segments.
	code, body = e.get(t, "/containerLogs/ns/../web/main")
	assert.Equal(t, http.StatusNotFound, code, body)

	e.expectNotImplemented(t, "/containerLogs/ns/web/main", "ContainerLogsHandler")
}

// A followed log shows each line as it comes and ends when the container does; with
// tailLines=0 it shows only the new lines.
func TestContainerLogsFollowEndsWithTheContainer(t *testing.T) {
	e := newRouteEnv(t)
	pod := testPod("ns", "job", "job-uid", podutil.APIServerSource, "main")
	pod.Annotations[mock.RunDurationAnnotation] = "20s"
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever // a job: it ends, and so does its log
	e.run(t, pod)

	resp, err := e.srv.Client().Get(e.srv.URL + "/containerLogs/ns/job/main?follow=true")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	newOnly, err := e.srv.Client().Get(e.srv.URL + "/containerLogs/ns/job/main?follow=true&tailLines=0")
	require.NoError(t, err)
	defer newOnly.Body.Close()
	require.Equal(t, http.StatusOK, newOnly.StatusCode)

	lines := bufio.NewReader(resp.Body)
	line, err := lines.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "mock: created container main (image img-main)\n", line)
	line, err = lines.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "mock: started container main\n", line, "flushed before the stream ends")

	require.Eventually(t, e.clock.HasWaiters, 10*time.Second, 10*time.Millisecond, "the mock waits for the job's end")
	e.clock.Step(20 * time.Second) // the job exits
	rest, err := io.ReadAll(lines)
	require.NoError(t, err, "the stream ends when the container does")
	assert.Equal(t, "mock: stopped container main: exit code 0 (Completed)\n", string(rest))

	got, err := io.ReadAll(newOnly.Body)
	require.NoError(t, err)
	assert.Equal(t, "mock: stopped container main: exit code 0 (Completed)\n", string(got))
}

// A followed log of a container that keeps running ends when the client goes away: the
// handler returns and leaves nothing behind (newRouteEnv checks for leaks).
func TestContainerLogsFollowEndsWithTheClient(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/containerLogs/ns/web/main?follow=true&tailLines=1", nil)
	require.NoError(t, err)
	resp, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "mock: started container main\n", line)

	cancel()
	_, err = io.ReadAll(resp.Body)
	require.Error(t, err)
	// The handler sees its request end; Close waits for it, then the leak check runs.
	e.srv.CloseClientConnections()
}
