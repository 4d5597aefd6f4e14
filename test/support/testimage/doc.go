// Package testimage builds container images for the CRI tests from one static Go program
// (./workload: pause, serve, log, sleep, exit, cat, ls, echo, env, get — no shell, so an exec
// into a container runs it too) and gets them into a containerd without any registry outside the
// machine: imported from an image tarball with ctr, or pushed to a registry served in process on
// 127.0.0.1, from which CRI PullImage fetches them over plain HTTP.
//
// The program is compiled once per test process (CGO_ENABLED=0, with the go command of PATH, in
// the module the test runs in). An image is two layers: the program at /workload, shared by
// every image, and a small one with the marker /etc/vk-image (so that a test tells the
// container's filesystem from the host's) and Options.Files. Entrypoint is ["/workload"], Cmd
// Options.Cmd; os/arch are the test's.
//
//	img, err := testimage.Build(testimage.Options{Cmd: []string{"log", "--every", "100ms"}})
//	err = testimage.Import(ctx, cd, "localhost/test/log:1", img) // cd: a *testcontainerd.Containerd
//
//	reg, err := testimage.StartRegistry(ctx)
//	defer reg.Close()
//	ref, err := reg.Push(ctx, "test/log:1", img) // "127.0.0.1:PORT/test/log:1"
//
// BuildWorkload puts the program itself on the host, for tests whose containers are host
// processes (the process provider):
//
//	bin, err := testimage.BuildWorkload(dir) // dir/workload; `bin serve --port 8080 --bind 127.0.0.1`
//
// Building needs the go command, importing needs ctr (`make testbin` installs it with
// containerd).
package testimage
