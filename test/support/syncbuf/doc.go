// Package syncbuf is a bytes buffer that one goroutine may write (a process's output copier, a
// stream) while the test reads it:
//
//	var out syncbuf.Buffer
//	cmd.Stdout = &out
//	require.Eventually(t, func() bool { return strings.Contains(out.String(), "ready") }, ...)
package syncbuf
