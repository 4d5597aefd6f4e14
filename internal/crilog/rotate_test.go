package crilog

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFilesOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "0.log")
	// Created out of order; counters order numerically, not as text (".10" after ".2").
	for _, name := range []string{
		"0.log.20240101-000002",
		"0.log.20240101-000001.10",
		"0.log",
		"0.log.20240101-000001.2",
		"0.log.20240101-000001",
		// Not rotated files of this log:
		"0.log.20240101-000003.gz",
		"0.log.tmp",
		"0.log.2024",
		"0.log.20240101-000001.01",
		"0.log.20240101-000001.0",
		"1.log.20240101-000000",
		"0.logx.20240101-000000",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o600))
	}
	files, err := Files(path)
	require.NoError(t, err)
	assert.Equal(t, []string{
		filepath.Join(dir, "0.log.20240101-000001"),
		filepath.Join(dir, "0.log.20240101-000001.2"),
		filepath.Join(dir, "0.log.20240101-000001.10"),
		filepath.Join(dir, "0.log.20240101-000002"),
		path,
	}, files)
}

func TestFilesWithoutCurrentOrDirectory(t *testing.T) {
	dir := t.TempDir()
	files, err := Files(filepath.Join(dir, "missing", "0.log"))
	require.NoError(t, err)
	assert.Empty(t, files)

	path := filepath.Join(dir, "0.log")
	require.NoError(t, os.WriteFile(path+".20240101-000001", nil, 0o600))
	files, err = Files(path)
	require.NoError(t, err)
	assert.Equal(t, []string{path + ".20240101-000001"}, files)
}

func TestNextRotatedName(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	rotated := func(stamp string, counter int) LogFile { return LogFile{stamp: stamp, counter: counter} }
	for _, tc := range []struct {
		name     string
		existing []LogFile
		now      time.Time
		want     string
	}{
		{name: "first", now: now, want: "0.log.20240101-120000"},
		{name: "later second", existing: []LogFile{rotated("20240101-115959", 0)}, now: now, want: "0.log.20240101-120000"},
		{name: "same second", existing: []LogFile{rotated("20240101-120000", 0)}, now: now, want: "0.log.20240101-120000.1"},
		{name: "same second again", existing: []LogFile{rotated("20240101-120000", 0), rotated("20240101-120000", 1)}, now: now, want: "0.log.20240101-120000.2"},
		{name: "clock went back", existing: []LogFile{rotated("20240101-130000", 3)}, now: now, want: "0.log.20240101-130000.4"},
		{name: "local time is named in UTC", now: now.In(time.FixedZone("", 3600)), want: "0.log.20240101-120000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, NextRotatedName("0.log", tc.existing, tc.now))
		})
	}
}
