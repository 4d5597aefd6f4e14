package node_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vk-static/vk-static/sources"
)

// TestPodControllerTranscripts pins the pod sync loop's answers to what its sources, its
// provider and the API server say, one transcript per situation ([transcript] and the comment
// above it explain how to read them). Times are those of the fake clock: the provider is polled
// every 10 s, and a pod is synced again 60–90 s after its last successful sync.
//
// Where a refusal is scripted, the source is seen in an update of its own, before the pod: a
// source's first update requeues every pod the provider runs, and one the worker is creating at
// that moment is synced twice — harmless, but a refused request is then sent twice, at random.
func TestPodControllerTranscripts(t *testing.T) {
	web := apiPod("web", "web-1")
	static := func(version string) *corev1.Pod { return withGrace(staticPod("web", version), 30) }
	forbidden := apierrors.NewForbidden(corev1.Resource("pods"), "web-n1", fmt.Errorf("node %q is not allowed", "n1"))

	for _, c := range []transcriptCase{{
		// The grace period is the provider's to honour; the controller gives it its grace plus
		// DefaultTerminationSlack, then frees the name and completes the deletion in the API
		// (grace 0, with the UID as precondition) without the provider's word.
		name: "graceful API deletion whose grace period runs out before the provider stops",
		steps: []step{
			{providerSlow("web-1"), nil},
			{api(sources.ADD, true), nil},
			{api(sources.ADD, false, web), []string{
				"provider: CreatePod default/web web-1",
			}},
			{advance(10 * time.Second), []string{ // the poll finds it running
				"api: patch pods/status default/web",
				"event: Normal Started default/web",
			}},
			{api(sources.DELETE, false, deleting(web, 30)), []string{
				"provider: DeletePod default/web web-1 grace=30s",
			}},
			{advance(20 * time.Second), nil}, // still running
			{advance(10 * time.Second), nil}, // 30 s are over, DefaultTerminationSlack is not
			{advance(2 * time.Second), []string{
				"api: delete pods default/web grace=0 uid=web-1",
			}},
		},
	}, {
		// The kubelet's two writes for a deleted pod, in its order: the terminal status the
		// provider reports, then the DELETE — sent together by the worker that finds the pod
		// terminated, never the DELETE alone.
		name: "graceful API deletion: the terminal status, then the DELETE",
		steps: []step{
			{providerSlow("web-1"), nil},
			{api(sources.ADD, true), nil},
			{api(sources.ADD, false, web), []string{
				"provider: CreatePod default/web web-1",
			}},
			{advance(10 * time.Second), []string{
				"api: patch pods/status default/web",
				"event: Normal Started default/web",
			}},
			{api(sources.DELETE, false, deleting(web, 30)), []string{
				"provider: DeletePod default/web web-1 grace=30s",
			}},
			{providerStops("web-1"), nil},
			{advance(10 * time.Second), []string{ // the poll finds it terminated
				"api: patch pods/status default/web",
				"api: delete pods default/web grace=0 uid=web-1",
			}},
		},
	}, {
		// A refusal is reported once per distinct answer, and never retried in a hurry: only
		// the periodic resync tries again, since the provider's circumstances may change.
		// Standalone, so that no status write races the resync that creates the pod.
		name:       "provider refuses a pod",
		standalone: true,
		steps: []step{
			{providerRefuses("web-1", "no GPU"), nil},
			{file(sources.ADD, true), nil},
			{file(sources.ADD, false, static("1")), []string{
				"provider: CreatePod default/web-n1 web-1 → invalid input: no GPU",
				"event: Warning FailedCreate default/web-n1",
			}},
			{advance(10 * time.Second), nil}, // not before the resync
			{advance(80 * time.Second), []string{
				"provider: CreatePod default/web-n1 web-1 → invalid input: no GPU",
			}},
			{providerRefuses("web-1", "no disk"), nil},
			{advance(90 * time.Second), []string{
				"provider: CreatePod default/web-n1 web-1 → invalid input: no disk",
				"event: Warning FailedCreate default/web-n1",
			}},
			{providerRefuses("web-1", ""), nil},
			{advance(90 * time.Second), []string{
				"provider: CreatePod default/web-n1 web-1",
			}},
		},
	}, {
		// Forbidden is the API server's refusal (NodeRestriction while the Node is being
		// re-registered, say): reported once, retried on the resync, never hammered.
		name: "mirror pod creation forbidden",
		steps: []step{
			{api(sources.ADD, true), nil},
			{apiAnswers("create", "pods", forbidden, forbidden), nil},
			{file(sources.ADD, true), nil},
			{file(sources.ADD, false, static("1")), []string{
				"provider: CreatePod default/web-n1 web-1",
				"api: create pods default/web-n1 → Forbidden",
				"event: Warning FailedMirror node/n1",
			}},
			{advance(10 * time.Second), []string{ // the refusal's back-off (half a second), not the resync
				"api: create pods default/web-n1 → Forbidden",
			}},
			{advance(10 * time.Second), []string{ // and the status has somewhere to go
				"api: create pods default/web-n1",
				"api: patch pods/status default/web-n1",
				"event: Normal Started default/web-n1",
			}},
		},
	}, {
		// Someone deleted the pod and created another under its name before the provider had
		// stopped ours: the delete's UID precondition fails with Conflict, which means the pod
		// is gone — not an error to retry.
		name: "conflict deleting a terminated API pod",
		steps: []step{
			{api(sources.ADD, true), nil},
			{api(sources.ADD, false, web), []string{
				"provider: CreatePod default/web web-1",
			}},
			{api(sources.DELETE, false, deleting(web, 30)), []string{
				"provider: DeletePod default/web web-1 grace=30s",
			}},
			{apiServerReplaces(apiPod("web", "web-2")), nil},
			{advance(10 * time.Second), []string{ // the poll finds web-1 gone
				"api: delete pods default/web grace=0 uid=web-1 → Conflict",
			}},
			{advance(10 * time.Second), nil}, // not retried
			{api(sources.REMOVE, false, web), nil},
			{api(sources.ADD, false, apiPod("web", "web-2")), []string{
				"provider: CreatePod default/web web-2",
			}},
		},
	}, {
		// The pod was deleted and another created under its name before its status was
		// written: the patch's UID precondition is refused as Invalid on metadata.uid, which
		// means the pod is gone — dropped, not retried (the kubelet reads the pod before each
		// patch and never sends it). The Started event goes with a written status only.
		name: "status patch of a replaced API pod",
		steps: []step{
			{api(sources.ADD, true), nil},
			{api(sources.ADD, false, web), []string{
				"provider: CreatePod default/web web-1",
			}},
			{apiServerReplaces(apiPod("web", "web-2")), nil},
			{advance(10 * time.Second), []string{ // the poll finds it running
				"api: patch pods/status default/web → Invalid",
			}},
			// Only the next poll's write, until the watch shows web-2: the refusal itself is
			// not retried (it was, beside the poll, while only Conflict meant "replaced").
			{advance(10 * time.Second), []string{
				"api: patch pods/status default/web → Invalid",
			}},
			{api(sources.REMOVE, false, web), []string{ // the watch shows web-1 gone
				"provider: DeletePod default/web web-1 grace=0s",
			}},
			{advance(10 * time.Second), nil}, // nothing more is written for it
		},
	}, {
		// One pod per name: each edit replaces the pod the controller waits for, and the newest
		// is created once, after the running one has stopped.
		name:       "rapid edits of a static pod",
		standalone: true,
		steps: []step{
			{providerSlow("web-1"), nil},
			{file(sources.ADD, true, static("1")), []string{
				"provider: CreatePod default/web-n1 web-1",
			}},
			{file(sources.REMOVE, false, static("1")), []string{
				"provider: DeletePod default/web-n1 web-1 grace=30s",
			}},
			{file(sources.ADD, false, static("2")), nil},
			{file(sources.REMOVE, false, static("2")), nil},
			{file(sources.ADD, false, static("3")), nil},
			{file(sources.REMOVE, false, static("3")), nil},
			{file(sources.ADD, false, static("4")), nil},
			{advance(10 * time.Second), nil}, // web-1 still running
			{providerStops("web-1"), nil},
			{advance(10 * time.Second), []string{ // the poll finds it stopped
				"provider: CreatePod default/web-n1 web-4",
			}},
		},
	}, {
		// After an agent restart, what the provider runs is adopted: not created again, and
		// stopped only once its source has been seen without it.
		name:       "restart adoption",
		standalone: true,
		running:    []*corev1.Pod{static("1"), withGrace(staticPod("old", "1"), 30)},
		steps: []step{
			{file(sources.ADD, false, static("1")), nil},
			{advance(10 * time.Second), nil},
			{file(sources.ADD, true), []string{
				"provider: DeletePod default/old-n1 old-1 grace=30s",
			}},
			{advance(10 * time.Second), nil}, // the poll finds it gone
		},
	}, {
		// What was written is what the API server holds, even before the watch shows it: a
		// status reported again meanwhile (every poll) is not written again, and its
		// conditions keep the transition times that were written.
		name: "a status written while the watch lags is not written again",
		steps: []step{
			{api(sources.ADD, true), nil},
			{watchLags(true), nil},
			{api(sources.ADD, false, web), []string{
				"provider: CreatePod default/web web-1",
			}},
			{advance(10 * time.Second), []string{ // the poll finds it running
				"api: patch pods/status default/web",
				"event: Normal Started default/web",
			}},
			{advance(10 * time.Second), nil}, // polled again, the echo still held back
			{advance(10 * time.Second), nil},
			{watchLags(false), nil},
			{advance(10 * time.Second), nil},
		},
	}} {
		t.Run(c.name, c.run)
	}
}
