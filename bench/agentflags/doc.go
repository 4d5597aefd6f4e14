// Package agentflags reads the command line the bench gives every agent it starts — vk-static's
// flags as test/support/agentproc and bench's startAgent pass them, a scenario's among them —
// for the peers that stand in for vk-static (bench/cmd/floor, kwokpeer, kubeletpeer). It is
// one list, so that a flag the bench starts passing is accepted by every peer at once; each
// peer uses the values it needs, ignores the others and adds flags of its own.
//
//	f := agentflags.Defaults()
//	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
//	f.Register(fs)
//	workers := fs.Int("workers", 8, "API writes in flight")
//	err := fs.Parse(args)
package agentflags
