package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// webServer is the example web server's command (python3's http.server, which a user's host
// has but a test's may not), and what the test runs in its place: the tests' workload program
// serving the working directory on the same address, as http.server does.
const webServer = `command: ["python3", "-m", "http.server", "18080", "--bind", "127.0.0.1"]`

func webServerStandIn() string {
	return fmt.Sprintf(`command: [%q, "serve", "--port", "18080", "--bind", "127.0.0.1", "--dir", "."]`, workloadBinary)
}

// What the README promises for `make run`: the example manifests run as real processes — a web
// server answering on 127.0.0.1:18080 once its readiness probe passes, a ticker whose logs
// stream, a run-once pod that ends Succeeded, and a pod whose init container ran first. The
// manifests run as they are, but for the web server's program (webServer): the test needs
// nothing installed that the Makefile does not install.
func TestExampleManifestsRunForReal(t *testing.T) {
	a := startProcessAgent(t)
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "manifests", "*.yaml"))
	require.NoError(t, err)
	require.Len(t, examples, 4, "the README describes four examples")
	for _, path := range examples {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		manifest := string(data)
		if filepath.Base(path) == "web.yaml" {
			require.Contains(t, manifest, webServer, "the web example's command, which the test replaces")
			manifest = strings.Replace(manifest, webServer, webServerStandIn(), 1)
		}
		a.WriteManifest(filepath.Base(path), manifest)
	}

	running := func(container string) func(*corev1.Pod) error {
		return func(p *corev1.Pod) error {
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Name == container && cs.State.Running != nil && p.Status.Phase == corev1.PodRunning {
					return nil
				}
			}
			return fmt.Errorf("phase %s, %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
	}
	a.waitMirror("web", time.Minute, "ready", func(p *corev1.Pod) error {
		if podReady(p) != corev1.ConditionTrue {
			return fmt.Errorf("not ready: %+v", p.Status.ContainerStatuses)
		}
		return nil
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get("http://127.0.0.1:18080/")
		require.NoError(c, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(c, http.StatusOK, resp.StatusCode)
		assert.Contains(c, string(body), "<pre>", "a directory listing: the server serves its working directory, the emptyDir at /srv")
	}, 30*time.Second, 200*time.Millisecond, "the web example answers on 127.0.0.1:18080")

	a.waitMirror("ticker", time.Minute, "running", running("ticker"))
	ctx := context.Background()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := podLogs(ctx, metav1.NamespaceDefault, a.MirrorName("ticker"), &corev1.PodLogOptions{Container: "ticker"})
		require.NoError(c, err)
		assert.Contains(c, logs, "tick 2 from "+a.MirrorName("ticker")+" on "+a.Node, "the downward API names the pod and the node")
	}, 30*time.Second, 200*time.Millisecond)

	a.waitMirror("once", time.Minute, "Succeeded", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	logs, err := podLogs(ctx, metav1.NamespaceDefault, a.MirrorName("once"), &corev1.PodLogOptions{Container: "job"})
	require.NoError(t, err)
	assert.Equal(t, "started\nfinished\n", logs)

	init := a.waitMirror("with-init", time.Minute, "main running", running("main"))
	require.Len(t, init.Status.InitContainerStatuses, 1)
	prepared := init.Status.InitContainerStatuses[0].State.Terminated
	require.NotNil(t, prepared, "the init container ran to its end first")
	assert.Equal(t, "Completed", prepared.Reason)
	assert.False(t, init.Status.ContainerStatuses[0].State.Running.StartedAt.Before(&prepared.FinishedAt), "main started after prepare finished")

	for _, path := range examples {
		a.RemoveManifest(filepath.Base(path))
	}
	for _, name := range []string{"web", "ticker", "once", "with-init"} {
		a.mirrorGone(name)
	}
	a.noContainerProcesses(30 * time.Second)
}

// Garbage in a manifest must not take its running pod down, not even across an agent restart:
// the restarted agent cannot decode the file, so it keeps the pod the process provider still
// runs — the same process — until the file decodes again or is removed.
func TestUnreadableManifestAtRestartKeepsItsProcess(t *testing.T) {
	a := startProcessAgent(t)
	a.writePod(staticPod("keep", shell("while true; do sleep 1; done")...))
	before := a.workload(podwait.MainStatus(a.waitMirror("keep", time.Minute, "running", podwait.MainRunning)))

	a.Stop()
	a.WriteManifest("keep.json", "{ this is not a pod")
	a.restart()
	mirror := a.waitMirror("keep", 30*time.Second, "still running", podwait.MainRunning)
	assert.Equal(t, before, a.workload(podwait.MainStatus(mirror)), "the same process, not a new one")
	assert.Equal(t, int32(0), podwait.MainStatus(mirror).RestartCount)
	assert.True(t, before.Running(), "the workload still runs")

	a.removePod("keep")
	a.mirrorGone("keep")
	a.noContainerProcesses(30 * time.Second)
}
