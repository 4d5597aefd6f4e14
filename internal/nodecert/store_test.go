package nodecert

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/util/certificate"
	testingclock "k8s.io/utils/clock/testing"
)

// TestStoreLayout: every update is a timestamped file (0600, certificate then key) and
// <prefix>-current.pem a symlink to the newest by absolute path, as the kubelet's.
func TestStoreLayout(t *testing.T) {
	dir := t.TempDir()
	clk := testingclock.NewFakePassiveClock(time.Date(2026, 11, 25, 18, 4, 5, 0, time.Local))
	s, err := newStore(dir, ClientPairName, clk)
	require.NoError(t, err)
	_, err = s.Current()
	require.ErrorIs(t, err, errNoPair, "empty store")

	cert1, key1 := pair(t, "system:node:a", time.Now().Add(time.Hour))
	got, err := s.Update(cert1, key1)
	require.NoError(t, err)
	assert.Equal(t, "system:node:a", got.Leaf.Subject.CommonName)
	clk.SetTime(clk.Now().Add(time.Minute))
	cert2, key2 := pair(t, "system:node:b", time.Now().Add(time.Hour))
	_, err = s.Update(cert2, key2)
	require.NoError(t, err)

	first := filepath.Join(dir, "kubelet-client-2026-11-25-18-04-05.pem")
	second := filepath.Join(dir, "kubelet-client-2026-11-25-18-05-05.pem")
	for _, p := range []string{first, second} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), p)
	}
	data, err := os.ReadFile(second)
	require.NoError(t, err)
	assert.Equal(t, string(cert2)+string(key2), string(data), "certificate, then key")
	link, err := os.Readlink(filepath.Join(dir, "kubelet-client-current.pem"))
	require.NoError(t, err)
	assert.Equal(t, second, link)
	assert.Equal(t, filepath.Join(dir, "kubelet-client-current.pem"), s.CurrentPath())
	_, err = os.Lstat(filepath.Join(dir, "kubelet-client-updated.pem"))
	assert.True(t, os.IsNotExist(err), "no updated link left: %v", err)

	cur, err := s.Current()
	require.NoError(t, err)
	assert.Equal(t, "system:node:b", cur.Leaf.Subject.CommonName)
}

// TestStoreSharesClientGosLayout: a directory written by client-go's file store (the kubelet,
// an older agent) is read, and one written here is read by client-go's.
func TestStoreSharesClientGosLayout(t *testing.T) {
	certPEM, keyPEM := pair(t, "system:node:a", time.Now().Add(time.Hour))

	theirsDir := t.TempDir()
	theirs, err := certificate.NewFileStore(ServerPairName, theirsDir, theirsDir, "", "")
	require.NoError(t, err)
	_, err = theirs.Update(certPEM, keyPEM)
	require.NoError(t, err)
	ours, err := newStore(theirsDir, ServerPairName, testingclock.NewFakePassiveClock(time.Now()))
	require.NoError(t, err)
	cur, err := ours.Current()
	require.NoError(t, err)
	assert.Equal(t, "system:node:a", cur.Leaf.Subject.CommonName)
	assert.Equal(t, theirs.CurrentPath(), ours.CurrentPath())

	oursDir := t.TempDir()
	ours, err = newStore(oursDir, ServerPairName, testingclock.NewFakePassiveClock(time.Now()))
	require.NoError(t, err)
	_, err = ours.Update(certPEM, keyPEM)
	require.NoError(t, err)
	theirs, err = certificate.NewFileStore(ServerPairName, oursDir, oursDir, "", "")
	require.NoError(t, err)
	cur, err = theirs.Current()
	require.NoError(t, err)
	assert.Equal(t, "system:node:a", cur.Leaf.Subject.CommonName)
}

// TestStoreRecoversAnInterruptedUpdate: a crash between creating the updated link and renaming
// it leaves no current; opening the store finishes the rename.
func TestStoreRecoversAnInterruptedUpdate(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := pair(t, "system:node:a", time.Now().Add(time.Hour))
	target := filepath.Join(dir, "kubelet-client-2026-01-01-00-00-00.pem")
	require.NoError(t, os.WriteFile(target, append(certPEM, keyPEM...), 0o600))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "kubelet-client-updated.pem")))

	s, err := newStore(dir, ClientPairName, testingclock.NewFakePassiveClock(time.Now()))
	require.NoError(t, err)
	link, err := os.Readlink(s.CurrentPath())
	require.NoError(t, err)
	assert.Equal(t, target, link)
}

// TestStoreOperatorPair: without a current pair, <prefix>.crt and <prefix>.key are read; a
// current that is a regular file is read but never replaced.
func TestStoreOperatorPair(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := pair(t, "system:node:op", time.Now().Add(time.Hour))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kubelet-server.crt"), certPEM, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kubelet-server.key"), keyPEM, 0o600))
	s, err := newStore(dir, ServerPairName, testingclock.NewFakePassiveClock(time.Now()))
	require.NoError(t, err)
	cur, err := s.Current()
	require.NoError(t, err)
	assert.Equal(t, "system:node:op", cur.Leaf.Subject.CommonName)

	require.NoError(t, os.WriteFile(s.CurrentPath(), append(certPEM, keyPEM...), 0o600))
	_, err = s.Update(certPEM, keyPEM)
	require.Error(t, err, "a regular file where the link goes is not replaced")
	st, err := os.Lstat(s.CurrentPath())
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular())
}

// TestStoreRefusesBadInput: what is not a certificate and a key is not written.
func TestStoreRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	s, err := newStore(dir, ClientPairName, testingclock.NewFakePassiveClock(time.Now()))
	require.NoError(t, err)
	certPEM, keyPEM := pair(t, "system:node:a", time.Now().Add(time.Hour))
	_, otherKey := pair(t, "system:node:a", time.Now().Add(time.Hour))
	for name, in := range map[string][2][]byte{
		"no certificate": {[]byte("junk"), keyPEM},
		"no key":         {certPEM, []byte("junk")},
	} {
		_, err := s.Update(in[0], in[1])
		assert.Error(t, err, name)
	}
	_, err = s.Update(certPEM, otherKey)
	assert.Error(t, err, "a key that does not match")
	_, err = s.Current()
	assert.True(t, errors.Is(err, errNoPair), "nothing became current: %v", err)
}

// TestStoreSameSecond: pairs stored within one second (the bootstrap pair and its first
// renewal; a quick retry) each get a file of their own. The file current pointed at is never
// written over, so a reader that opened it, or follows the link, finds a whole pair that
// matches; the names stay the kubelet's, which client-go's store reads.
func TestStoreSameSecond(t *testing.T) {
	dir := t.TempDir()
	clk := testingclock.NewFakePassiveClock(time.Date(2026, 11, 25, 18, 4, 5, 0, time.Local))
	s, err := newStore(dir, ClientPairName, clk)
	require.NoError(t, err)
	var files []string
	var pems [][]byte
	for _, cn := range []string{"system:node:a", "system:node:b", "system:node:c"} {
		certPEM, keyPEM := pair(t, cn, time.Now().Add(time.Hour))
		_, err := s.Update(certPEM, keyPEM)
		require.NoError(t, err)
		link, err := os.Readlink(s.CurrentPath())
		require.NoError(t, err)
		files, pems = append(files, link), append(pems, append(certPEM, keyPEM...))
	}
	assert.Equal(t, []string{
		filepath.Join(dir, "kubelet-client-2026-11-25-18-04-05.pem"),
		filepath.Join(dir, "kubelet-client-2026-11-25-18-04-05-1.pem"),
		filepath.Join(dir, "kubelet-client-2026-11-25-18-04-05-2.pem"),
	}, files, "a file per pair")
	for i, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Equal(t, string(pems[i]), string(data), "%s kept its pair", f)
	}
	theirs, err := certificate.NewFileStore(ClientPairName, dir, dir, "", "")
	require.NoError(t, err)
	cur, err := theirs.Current()
	require.NoError(t, err)
	assert.Equal(t, "system:node:c", cur.Leaf.Subject.CommonName, "client-go reads the newest")
}
