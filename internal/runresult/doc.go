// Package runresult records how a long-running component's Run ended, for the Done and Err
// methods the agent and its controllers share: Done is closed once Run has returned, and Err
// is then what it returned. A component embeds a Result and calls Finish from a deferred
// function of Run.
//
//	func (c *Controller) Run(ctx context.Context) (err error) {
//		defer func() { c.Finish(err) }()
//		...
//	}
package runresult
