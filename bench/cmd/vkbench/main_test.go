package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vk-static/vk-static/bench"
)

// Results keeps vk-static's last good round for compare; a failed one only when none was good.
func TestLastOfPeerPrefersAGoodRun(t *testing.T) {
	good := &bench.Result{Round: 2}
	failed := &bench.Result{Round: 3, Error: "990 of 1000 pods never Running"}
	floor := &bench.Result{Peer: bench.PeerFloor, Round: 3}
	assert.Same(t, good, lastOfPeer([]*bench.Result{{Round: 1}, good, failed, floor}, bench.PeerVKStatic))
	assert.Same(t, failed, lastOfPeer([]*bench.Result{failed, floor}, bench.PeerVKStatic))
	assert.Same(t, floor, lastOfPeer([]*bench.Result{good, failed, floor}, bench.PeerFloor))
	assert.Nil(t, lastOfPeer([]*bench.Result{floor}, bench.PeerKWOK))
}

// -peers baseline needs -baseline: without it the run stops before starting anything.
func TestBaselinePeerNeedsItsBinary(t *testing.T) {
	names, err := selectPeers("floor, baseline")
	assert.NoError(t, err)
	assert.Equal(t, []string{bench.PeerFloor, bench.PeerBaseline}, names)
	_, err = preparePeers([]string{bench.PeerBaseline}, "bin/vk-static", peerBinaries{}, t.TempDir(), nil)
	assert.ErrorContains(t, err, "-baseline")

	peers, err := preparePeers([]string{bench.PeerBaseline}, "bin/vk-static", peerBinaries{baseline: os.Args[0]}, t.TempDir(), nil)
	assert.NoError(t, err)
	assert.Equal(t, []string{bench.PeerVKStatic, bench.PeerBaseline}, []string{peers[0].Name, peers[1].Name})
	assert.Equal(t, os.Args[0], peers[1].Binary)
}
