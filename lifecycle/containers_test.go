package lifecycle

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
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeImageRuntime is a fakeRuntime that runs images: present holds the images it has by name
// (their refs), and a pull of an image in broken fails.
type fakeImageRuntime struct {
	*fakeRuntime
	imu     sync.Mutex
	present map[string]string
	broken  map[string]bool
	pulls   []string // "image auth-user" per pull
	refs    int      // ImageRef calls
}

func (f *fakeImageRuntime) ImageRef(_ context.Context, image string) (string, error) {
	f.imu.Lock()
	defer f.imu.Unlock()
	f.refs++
	return f.present[image], nil
}

func (f *fakeImageRuntime) PullImage(_ context.Context, image string, auth *ImageAuth, _ *SandboxConfig) (string, error) {
	f.imu.Lock()
	defer f.imu.Unlock()
	user := "-"
	if auth != nil {
		user = auth.Username
	}
	f.pulls = append(f.pulls, image+" "+user)
	if f.broken[image] || (auth != nil && auth.Password != "right") {
		return "", fmt.Errorf("pull %s: not found", image)
	}
	f.present[image] = "sha256:" + image
	return f.present[image], nil
}

func (f *fakeImageRuntime) pulled() []string {
	f.imu.Lock()
	defer f.imu.Unlock()
	return append([]string(nil), f.pulls...)
}

func newImageHarness(t *testing.T, objects *fakeObjects) (*harness, *fakeImageRuntime) {
	h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)), root: t.TempDir(),
		events: record.NewFakeRecorder(1000)}
	h.rt = newFakeRuntime(h.clock)
	img := &fakeImageRuntime{fakeRuntime: h.rt, present: map[string]string{"local:1": "sha256:local", "tool:1": "sha256:tool"}, broken: map[string]bool{}}
	h.runtime = img
	h.objects = objects
	h.start()
	return h, img
}

func TestImagePullPolicies(t *testing.T) {
	h, img := newImageHarness(t, nil)
	pod := testPod("i1", corev1.RestartPolicyAlways,
		corev1.Container{Name: "present", Image: "local:1"},                                    // IfNotPresent, present: no pull
		corev1.Container{Name: "latest", Image: "local:1", ImagePullPolicy: corev1.PullAlways}, // pulled even so
		corev1.Container{Name: "absent", Image: "remote:2"},                                    // pulled
		corev1.Container{Name: "never", Image: "remote:3", ImagePullPolicy: corev1.PullNever},  // not there: waits
		corev1.Container{Name: "entrypoint", Image: "tool:1", Args: []string{"--serve"}},       // no command: the image's
	)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "four running, one ErrImageNeverPull", func(s *corev1.PodStatus) bool {
		w := mainState(s, 3).Waiting
		return mainState(s, 0).Running != nil && mainState(s, 1).Running != nil && mainState(s, 2).Running != nil &&
			mainState(s, 4).Running != nil && w != nil && w.Reason == "ErrImageNeverPull"
	})
	assert.ElementsMatch(t, []string{"local:1 -", "remote:2 -"}, img.pulled())
	s := h.status(pod.UID)
	assert.Equal(t, "sha256:local", s.ContainerStatuses[0].ImageID)
	assert.Equal(t, "sha256:remote:2", s.ContainerStatuses[2].ImageID)
	assert.Contains(t, mainState(s, 3).Waiting.Message, `Container image "remote:3" is not present with pull policy of Never`)
	cfg := h.rt.config("entrypoint")
	assert.Empty(t, cfg.Command, "no command: the image's entrypoint runs")
	assert.Equal(t, []string{"--serve"}, cfg.Args)
	assert.Equal(t, "sha256:tool", cfg.ImageRef)
}

func TestImagePullBackOffGrows(t *testing.T) {
	h, img := newImageHarness(t, nil)
	img.broken["missing:1"] = true
	pod := testPod("i2", corev1.RestartPolicyAlways, corev1.Container{Name: "app", Image: "missing:1"})
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	waiting := func(reason string) func(*corev1.PodStatus) bool {
		return func(s *corev1.PodStatus) bool { w := mainState(s, 0).Waiting; return w != nil && w.Reason == reason }
	}
	h.eventually(pod.UID, "ErrImagePull", waiting("ErrImagePull"))
	assert.Contains(t, mainState(h.status(pod.UID), 0).Waiting.Message, `failed to pull image "missing:1"`)
	// Halfway through the back-off the pod is synced without any event, and says so.
	h.step(5 * time.Second)
	h.eventually(pod.UID, "ImagePullBackOff", waiting("ImagePullBackOff"))
	assert.Len(t, img.pulled(), 1)
	// The back-off doubles: 10 s, then 20 s; a sync within it (kick) does not pull.
	elapsed := 5 * time.Second
	for i, wait := range []time.Duration{10 * time.Second, 20 * time.Second} {
		h.step(wait - time.Second - elapsed)
		h.p.kick(pod.UID)
		h.eventually(pod.UID, "still in back-off", waiting("ImagePullBackOff"))
		assert.Len(t, img.pulled(), i+1, "no pull before the back-off ends")
		h.step(time.Second)
		require.Eventually(t, func() bool { return len(img.pulled()) == i+2 }, 5*time.Second, time.Millisecond, "pulled again after %s", wait)
		elapsed = 0
	}
	events := strings.Join(h.drainEvents(), "\n")
	assert.Contains(t, events, `Warning Failed Error: ErrImagePull`)
	assert.Contains(t, events, `Normal BackOff Back-off pulling image "missing:1"`)
	assert.Contains(t, events, `Warning Failed Error: ImagePullBackOff`)
}

// TestImagePullBackOffGoesWithThePod: a pod created again with the same UID (a static pod's
// manifest put back) pulls at once, and then backs off from the first delay, not from where
// the pod that was deleted had got to.
func TestImagePullBackOffGoesWithThePod(t *testing.T) {
	h, img := newImageHarness(t, nil)
	img.broken["missing:1"] = true
	pod := testPod("i2g", corev1.RestartPolicyAlways, corev1.Container{Name: "app", Image: "missing:1"})
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "ErrImagePull", func(s *corev1.PodStatus) bool {
		w := mainState(s, 0).Waiting
		return w != nil && w.Reason == "ErrImagePull"
	})
	h.deleteUntilStopped(pod)
	require.Eventually(t, func() bool { return !h.known(pod) }, 5*time.Second, time.Millisecond, "forgotten")

	require.NoError(t, h.p.CreatePod(context.Background(), pod.DeepCopy()))
	require.Eventually(t, func() bool { return len(img.pulled()) == 2 }, 5*time.Second, time.Millisecond,
		"pulled again at once (pulls %v)", img.pulled())
	h.step(5 * time.Second) // halfway: the pod says ImagePullBackOff
	h.step(5 * time.Second)
	require.Eventually(t, func() bool { return len(img.pulled()) == 3 }, 5*time.Second, time.Millisecond,
		"pulled again after the first back-off, 10 s (pulls %v)", img.pulled())
}

func TestImagePullSecretsAreTriedInTurn(t *testing.T) {
	secret := func(name, password string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"127.0.0.1:5000":{"username":"` + name + `","password":"` + password + `"}}}`)}}
	}
	objects := &fakeObjects{secrets: map[string]*corev1.Secret{"wrong": secret("wrong", "nope"), "right": secret("right", "right")}}
	h, img := newImageHarness(t, objects)
	pod := testPod("i3", corev1.RestartPolicyAlways, corev1.Container{Name: "app", Image: "127.0.0.1:5000/app:v1"})
	pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "gone"}, {Name: "wrong"}, {Name: "right"}}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	assert.Equal(t, []string{"127.0.0.1:5000/app:v1 wrong", "127.0.0.1:5000/app:v1 right"}, img.pulled(),
		"a missing secret is skipped, the others tried in turn")
}
