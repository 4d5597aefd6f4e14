package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// terminationMessageFileOf is the host file the newest instance of container name was given
// at its terminationMessagePath, "" for none.
func terminationMessageFileOf(t *testing.T, rt *fakeRuntime, name, containerPath string) string {
	t.Helper()
	cfg := rt.config(name)
	require.NotNil(t, cfg, "container %s was created", name)
	for _, m := range cfg.Mounts {
		if m.ContainerPath == containerPath {
			return m.HostPath
		}
	}
	return ""
}

// writeLog writes lines to the CRI log at path, one "F" entry each.
func writeLog(t *testing.T, path string, lines ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "2026-11-23T07:00:00.000000000Z stdout F %s\n", l)
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
}

func terminatedMessage(h *harness, uid string) string {
	h.t.Helper()
	var msg string
	h.eventually(types.UID(uid), "terminated", func(s *corev1.PodStatus) bool {
		if t := mainState(s, 0).Terminated; t != nil {
			msg = t.Message
			return true
		}
		return false
	})
	return msg
}

func TestTerminationMessageIsReadFromTheFileAtItsPath(t *testing.T) {
	for _, tc := range []struct {
		name, path, write string
		policy            corev1.TerminationMessagePolicy
		exit              int32
		log               []string
		want              string
	}{
		{name: "default path", path: "/dev/termination-log", write: "DONE", want: "DONE"},
		{name: "non-default path", path: "/dev/termination-custom-log", write: "DONE", want: "DONE"},
		{name: "the last 4096 bytes", path: "/dev/termination-log", write: strings.Repeat("a", 1000) + strings.Repeat("b", 4096), want: strings.Repeat("b", 4096)},
		{name: "fallback: the file wins", path: "/dev/termination-log", write: "OK", policy: corev1.TerminationMessageFallbackToLogsOnError,
			log: []string{"DONE"}, want: "OK"},
		{name: "fallback: success with nothing written is empty", path: "/dev/termination-log", policy: corev1.TerminationMessageFallbackToLogsOnError,
			log: []string{"DONE"}, want: ""},
		{name: "fallback: failure with nothing written is the log", path: "/dev/termination-log", policy: corev1.TerminationMessageFallbackToLogsOnError,
			exit: 1, log: []string{"DONE"}, want: "DONE\n"},
		{name: "no fallback: failure with nothing written is empty", path: "/dev/termination-log", exit: 1, log: []string{"DONE"}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newImageHarness(t, nil)
			pod := testPod("tm", corev1.RestartPolicyNever, corev1.Container{Name: "app", Image: "local:1",
				TerminationMessagePath: tc.path, TerminationMessagePolicy: tc.policy})
			require.NoError(t, h.p.CreatePod(context.Background(), pod))
			h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })

			file := terminationMessageFileOf(t, h.rt, "app", tc.path)
			require.NotEmpty(t, file, "a file is bound at terminationMessagePath")
			fi, err := os.Stat(file)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm(), "writable by the container's user, whoever it is")
			require.NoError(t, os.WriteFile(file, []byte(tc.write), 0o666))
			if tc.log != nil {
				writeLog(t, h.rt.config("app").LogPath, tc.log...)
			}
			h.rt.exit(h.rt.running("app"), tc.exit)
			assert.Equal(t, tc.want, terminatedMessage(h, "tm"))
		})
	}
}

// The log a failed container falls back to is cut as the kubelet cuts it: its last 80 lines,
// of which the last 2048 bytes.
func TestTerminationMessageFallsBackToTheLogsEnd(t *testing.T) {
	h := newHarness(t) // host commands: no file is bound, the log is all there is
	pod := testPod("tl", corev1.RestartPolicyNever, corev1.Container{Name: "app", Command: []string{"run"},
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError})
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	assert.Empty(t, terminationMessageFileOf(t, h.rt, "app", "/dev/termination-log"),
		"a runtime of host commands shares the host's /dev: nothing is mounted there")

	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("%03d %s", i, strings.Repeat("x", 36))) // 41 bytes with the newline
	}
	writeLog(t, h.rt.config("app").LogPath, lines...)
	h.rt.exit(h.rt.running("app"), 2)
	msg := terminatedMessage(h, "tl")
	want := strings.Join(lines[20:], "\n") + "\n" // 80 lines: 3280 bytes
	assert.Equal(t, want[len(want)-2048:], msg)
}

// A runtime's own message (OOMKilled's, a start error's) comes first.
func TestTerminationMessageFollowsTheRuntimesMessage(t *testing.T) {
	h, _ := newImageHarness(t, nil)
	pod := testPod("tr", corev1.RestartPolicyNever, corev1.Container{Name: "app", Image: "local:1", Command: []string{"missing"},
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError})
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	msg := terminatedMessage(h, "tr")
	assert.True(t, strings.HasPrefix(msg, `exec: "missing": executable file not found in $PATH: Error on reading termination message from logs:`), msg)
}
