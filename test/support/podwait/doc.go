// Package podwait waits, in a test, for a pod in the API server: until a check of it passes,
// or until it is gone; and it checks the one container, main, that the end-to-end tests' pods
// run.
//
//	p := podwait.Until(t, client, "default", a.MirrorName("web"), time.Minute, "running", podwait.MainRunning)
//	podwait.Gone(t, client, "default", a.MirrorName("web"), time.Minute)
//
// Both poll every 100 ms (no fixed sleep) and fail the test when timeout passes.
package podwait
