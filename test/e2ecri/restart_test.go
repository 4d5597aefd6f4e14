package e2ecri

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// TestRestartsKeepContainers: with 10 CRI pods running, the agent killed with -9 and started
// again adopts the same containers (no new one, restart counts unchanged); containerd restarted
// under the agent is reconnected to, the pods stay Running meanwhile, and a container that
// does stop afterwards is seen and restarted, alone.
func TestRestartsKeepContainers(t *testing.T) {
	const n = 10
	a := startAgent(t)
	rs := runtimeService(t)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("keep-%d", i)
		a.writePod(imagePod(names[i], workloadImage, "sleep"))
	}
	ids := a.runningIDs(names, 90*time.Second) // mirror → containerd://ID
	before := runtimeContainers(t, rs)
	require.Len(t, before, n, "containers in containerd")

	// The agent killed.
	a.Kill()
	require.NoError(t, a.Restart(context.Background(), 20*time.Second))
	// The restarted agent has taken the pods up again: its provider runs all of them.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		v, err := a.Metric(context.Background(), "vk_static_provider_pods", nil)
		require.NoError(c, err)
		assert.Equal(c, float64(n), v, "pods the provider runs")
	}, 30*time.Second, 200*time.Millisecond, "pods adopted")
	assert.Equal(t, ids, a.runningIDs(names, 30*time.Second), "container IDs after the restart")
	after := runtimeContainers(t, rs)
	assert.Len(t, after, n, "containers in containerd after the restart")
	for id, c := range after {
		assert.NotNil(t, before[id], "new container %s (%s)", id, c.Metadata.Name)
		assert.Equal(t, "CONTAINER_RUNNING", c.State.String(), "%s", c.Metadata.Name)
	}

	// containerd restarted under the agent.
	seen := a.watchMirrors(t)
	require.NoError(t, cd.Restart(context.Background()))
	// Statuses after the restart come from a relist of the new containerd: stop one
	// container behind the agent's back; it is seen stopped and restarted, the others not.
	stopped := strings.TrimPrefix(ids[a.MirrorName(names[0])], "containerd://")
	require.NoError(t, rs.StopContainer(context.Background(), stopped, 2))
	a.waitMirror(names[0], 60*time.Second, "restarted once, running", func(p *corev1.Pod) error {
		cs := podwait.MainStatus(p)
		if err := podwait.MainRunning(p); err != nil || cs.RestartCount != 1 || cs.ContainerID == ids[p.Name] {
			return fmt.Errorf("main %s", podwait.Describe(cs))
		}
		return nil
	})
	// The other nine never looked stopped, not while containerd was down nor after.
	for _, flip := range seen() {
		assert.Contains(t, flip, " "+a.MirrorName(names[0])+":", "mirror status across the containerd restart")
	}
	now := a.runningIDs(names[1:], 10*time.Second)
	for _, name := range names[1:] {
		assert.Equal(t, ids[a.MirrorName(name)], now[a.MirrorName(name)], "%s restarted", name)
	}

	a.removePods(names...)
	nothingLeft(t)
}

// runningIDs waits until every pod's mirror is Running with main never restarted, and returns
// main's container IDs by mirror name.
func (a *agent) runningIDs(names []string, timeout time.Duration) map[string]string {
	a.t.Helper()
	ids := map[string]string{}
	for _, name := range names {
		p := a.waitMirror(name, timeout, "Running", func(p *corev1.Pod) error {
			if err := podwait.MainRunning(p); err != nil {
				return err
			}
			if cs := podwait.MainStatus(p); !strings.HasPrefix(cs.ContainerID, "containerd://") || cs.RestartCount != 0 {
				return fmt.Errorf("main %s", podwait.Describe(cs))
			}
			return nil
		})
		ids[p.Name] = podwait.MainStatus(p).ContainerID
	}
	return ids
}

// watchMirrors watches the agent's mirror pods from now on; the function it returns stops
// the watch and describes every status it saw in which main was not running, or ran another
// container than when the watch began.
func (a *agent) watchMirrors(t *testing.T) func() []string {
	t.Helper()
	var (
		mu    sync.Mutex
		flips []string
		first = map[string]string{}
	)
	stop := watchPods(t, metav1.NamespaceDefault, "spec.nodeName", a.Node, func(evType watch.EventType, p *corev1.Pod) {
		cs := podwait.MainStatus(p)
		mu.Lock()
		defer mu.Unlock()
		if _, ok := first[p.Name]; !ok && cs != nil {
			first[p.Name] = cs.ContainerID
		}
		if err := podwait.MainRunning(p); err != nil || cs.ContainerID != first[p.Name] {
			flips = append(flips, fmt.Sprintf("%s %s: %v %s", evType, p.Name, err, podwait.Describe(cs)))
		}
	})
	return func() []string {
		stop()
		mu.Lock()
		defer mu.Unlock()
		return flips
	}
}
