package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fakeUserImageRuntime is a fakeImageRuntime whose images run as users: uid, or a name.
type fakeUserImageRuntime struct {
	*fakeImageRuntime
	uids  map[string]int64
	names map[string]string
}

func (f *fakeUserImageRuntime) ImageUser(_ context.Context, image string) (*int64, string, error) {
	if uid, ok := f.uids[image]; ok {
		return &uid, "", nil
	}
	if image == "broken:1" {
		return nil, "", fmt.Errorf("image status of %s: gone", image)
	}
	return nil, f.names[image], nil
}

func TestRunAsNonRootIsCheckedAgainstTheImagesUser(t *testing.T) {
	images := map[string]string{"root:1": "sha256:root", "nonroot:1": "sha256:nonroot", "named:1": "sha256:named", "unnamed:1": "sha256:unnamed", "broken:1": "sha256:broken"}
	for _, tc := range []struct {
		name, image string
		runAsUser   *int64
		want        string // the waiting message; "" runs
	}{
		{name: "image user 1234", image: "nonroot:1"},
		{name: "image root", image: "root:1", want: `container has runAsNonRoot and image will run as root (pod: "p-rn_default(rn)", container: app)`},
		{name: "image without user", image: "unnamed:1", want: `container has runAsNonRoot and image will run as root (pod: "p-rn_default(rn)", container: app)`},
		{name: "image user name", image: "named:1", want: `container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root (pod: "p-rn_default(rn)", container: app)`},
		{name: "explicit non-root user over a root image", image: "root:1", runAsUser: ptr.To[int64](1000)},
		{name: "explicit root", image: "nonroot:1", runAsUser: ptr.To[int64](0), want: `container's runAsUser breaks non-root policy (pod: "p-rn_default(rn)", container: app)`},
		{name: "image status fails", image: "broken:1", want: "image status of broken:1: gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)), root: t.TempDir(),
				events: record.NewFakeRecorder(1000)}
			h.rt = newFakeRuntime(h.clock)
			img := &fakeImageRuntime{fakeRuntime: h.rt, present: images, broken: map[string]bool{}}
			h.runtime = &fakeUserImageRuntime{fakeImageRuntime: img, uids: map[string]int64{"root:1": 0, "nonroot:1": 1234}, names: map[string]string{"named:1": "nginx"}}
			h.start()

			pod := testPod("rn", corev1.RestartPolicyNever, corev1.Container{Name: "app", Image: tc.image,
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: tc.runAsUser}})
			require.NoError(t, h.p.CreatePod(context.Background(), pod))
			if tc.want == "" {
				h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
				return
			}
			h.eventually(pod.UID, "CreateContainerConfigError", func(s *corev1.PodStatus) bool {
				w := mainState(s, 0).Waiting
				return w != nil && w.Reason == "CreateContainerConfigError"
			})
			assert.Equal(t, tc.want, mainState(h.status(pod.UID), 0).Waiting.Message)
			assert.Empty(t, h.rt.calls(), "never created")
			assert.Contains(t, strings.Join(h.drainEvents(), "\n"), "Warning Failed Error: "+tc.want)
		})
	}
}
