// Package protocol is how the process runtime and a container's supervisor talk: how the
// runtime starts a supervisor (EnvName, ReportFd), the supervisor's start report on ReportFd,
// and the requests on the supervisor's socket (watch, exec, attach), one per connection, with
// the descriptors they hand over passed as SCM_RIGHTS.
//
// Both sides may be different builds — an agent adopts containers an older supervisor started
// — so messages only ever gain fields.
//
//	conn, err := protocol.Dial(containerDir)
//	...
//	err = protocol.SendRequest(conn, protocol.Request{Op: protocol.OpWatch}, nil)
//	// the supervisor closes conn once state.json records the workload's end
package protocol
