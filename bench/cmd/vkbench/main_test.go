package main

import (
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
