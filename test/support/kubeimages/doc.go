// Package kubeimages builds the images kubeadm's static pods name, so that its manifests run
// unchanged on a containerd with no registry in reach (imagePullPolicy IfNotPresent finds them
// imported): registry.k8s.io/kube-apiserver, kube-controller-manager and kube-scheduler at
// KubernetesVersion, registry.k8s.io/etcd and registry.k8s.io/pause at kubeadm's versions.
//
// The references are constants checked against kubeadm: kubeadm v1.36.3 derives them from its
// own constants (k8s.io/kubernetes/cmd/kubeadm/app/constants: DefaultEtcdVersion,
// PauseVersion, CoreDNSVersion; cmd/kubeadm/app/images: GetKubernetesImage, GetEtcdImage,
// GetPauseImage) with imageRepository registry.k8s.io, and the package's test compares them
// with `kubeadm config images list --kubernetes-version v1.36.3`. Constants rather than asking
// kubeadm at run time: a caller knows the references without kubeadm (a test that runs the
// CRI provider alone), they are visible in the source, and the test still fails the day
// kubeadm names another.
//
// Each control-plane image is a single layer holding one static binary at
// /usr/local/bin/<command> (the upstream images' place), with PATH the upstream images': the
// manifests' commands are bare names (`kube-apiserver`, `etcd`). The binaries are the test
// control plane's (kube-apiserver, kube-controller-manager, etcd: `make testbin`,
// test/support/testenv.BinDir) and kube-scheduler from kubeadm's cache (`make
// kubeadm-testbin`, KubeadmBinDir). The pause image is test/support/testimage's, the same
// image as test/support/testcontainerd's sandbox image, so importing it stores nothing new.
//
//	bins, err := kubeimages.FindBinaries()
//	images, err := kubeimages.Build(ctx, bins)        // reference → image, Pause included
//	err = kubeimages.Import(ctx, cd, images)          // cd: a *testcontainerd.Containerd
//
// or, for a registry, reg.Push each image under its reference's repository and tag (the
// references' registry.k8s.io then needs a mirror in containerd's configuration).
//
// The four layers are about 430 MB of binaries, uncompressed: gzip costs over a minute under
// the race detector, while containerd stores and unpacks an uncompressed layer by copying it.
// They are read from the binaries, not held in memory; Import writes each to an image tarball
// for ctr.
package kubeimages
