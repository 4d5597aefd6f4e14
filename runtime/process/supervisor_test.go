package process

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// The supervisor reads config.json as records.Workload, the runtime writes it as
// containerRecord: every field the supervisor uses must come through, under the same name.
func TestWorkloadRecord(t *testing.T) {
	rec := containerRecord{
		ID: "0123456789abcdef", SandboxID: "fedcba9876543210", CreatedAt: time.Unix(1, 0),
		Config: lifecycle.ContainerConfig{
			Name: "app", Command: []string{"sh", "-c"}, Args: []string{"true"}, Env: []string{"A=1"}, WorkingDir: "/tmp",
			User:   &lifecycle.User{UID: 1, GID: 2},
			Mounts: []lifecycle.Mount{{HostPath: "/h", ContainerPath: "/c", ReadOnly: true}},
			Stdin:  true, StdinOnce: true, TTY: true, LogPath: "/var/log/pods/x/app/0.log", StopSignal: 15,
			Labels: map[string]string{"a": "b"},
		},
		User:           lifecycle.User{UID: 1000, GID: 1001, SupplementalGroups: []int64{4, 5}},
		SetCredentials: true, LogMaxSize: 1 << 20, LogMaxFiles: 3,
	}
	data, err := json.Marshal(rec)
	require.NoError(t, err)
	var got records.Workload
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, records.Workload{
		Config: records.WorkloadConfig{
			Command: rec.Config.Command, Args: rec.Config.Args, Env: rec.Config.Env, WorkingDir: "/tmp",
			Mounts: []records.Mount{{HostPath: "/h", ContainerPath: "/c", ReadOnly: true}},
			Stdin:  true, StdinOnce: true, TTY: true, LogPath: rec.Config.LogPath,
		},
		User:           records.User{UID: 1000, GID: 1001, SupplementalGroups: []int64{4, 5}},
		SetCredentials: true, LogMaxSize: 1 << 20, LogMaxFiles: 3,
	}, got)
}

func TestSupervisorBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "vk-static-supervisor")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))
	wd, err := os.Getwd()
	require.NoError(t, err)
	rel, err := filepath.Rel(wd, exe)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, path, want string
		fails            bool
	}{
		{name: "empty: the agent re-executed", path: "", want: reexecSelf},
		{name: "an executable", path: exe, want: exe},
		{name: "relative: made absolute", path: rel, want: exe},
		{name: "missing", path: filepath.Join(dir, "missing"), fails: true},
		{name: "not executable", path: plain, fails: true},
		{name: "a directory", path: dir, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := supervisorBinary(tc.path)
			if tc.fails {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
