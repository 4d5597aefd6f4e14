package process

import (
	"net/netip"

	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
)

func dialAddrs(own, others []procfs.Listener) []netip.AddrPort { return nil }
