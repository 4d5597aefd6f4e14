# vk-static — see README.md. Two commands matter: `make run` and `make test`.

GO        ?= go
BIN       := bin
# The test control plane is built from Go modules (hack/tools) into a cache directory that
# survives `git clean` and is shared by every checkout on the machine. The directory is keyed by
# hack/tools/go.sum, so changing the tools module rebuilds and nothing else does
# (test/support/testenv computes the same key when run outside make).
KUBE_VERSION := v1.36.3
TOOLS_KEY := $(shell sha256sum hack/tools/go.sum | cut -c1-12)
TESTBIN   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vk-static/testbin/$(KUBE_VERSION)-$(TOOLS_KEY)
APISERVER := $(TESTBIN)/kube-apiserver
CONTROLLER_MANAGER := $(TESTBIN)/kube-controller-manager
ETCD      := $(TESTBIN)/etcd
KUBECTL   := $(TESTBIN)/kubectl
KUBE_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
                -X k8s.io/component-base/version.gitMajor=1 \
                -X k8s.io/component-base/version.gitMinor=36
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/vk-static/vk-static/internal/version.Version=$(VERSION)
# grpcnotrace leaves gRPC's x/net/trace (and its html/template) out of the agent: with it the
# linker keeps every exported method of every type, 30 MB of binary and ~10 MB of resident
# memory (docs/performance.md, "The binary"). test/support/agentproc.BuildTags is the same list.
BUILD_TAGS := grpcnotrace
FUZZTIME  ?= 20s
# The kubelet API's handlers are fuzzed for less: each input is a whole request through the
# handler chain, and the seeds (node/api's negative tests) already cover every route.
FUZZTIME_API ?= 10s

export VK_STATIC_TESTBIN := $(TESTBIN)

.PHONY: all build test fuzz testbin cri-testbin dbus-testbin kubeadm-testbin vm-testbin test-cgroupv2 kubectl lint run demo bench bench-full bench-cri bench-heap clean

all: build

# The agent, and beside it the process provider's container supervisor, which it finds there.
# Both are built without cgo (only net's resolver and os/user would use it; their pure-Go
# versions read /etc/resolv.conf, /etc/passwd and /etc/group): a static binary starts without
# the dynamic loader and libc, which every container would pay for (docs/performance.md,
# process-100), and whose pages are ~2.7 MB of the agent's RssFile ("Memory at api-1k").
build:
	CGO_ENABLED=0 $(GO) build -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/vk-static ./cmd/vk-static
	CGO_ENABLED=0 $(GO) build -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/vk-static-supervisor ./cmd/vk-static-supervisor

# run starts the agent standalone (no API server) on the example manifests, with its state in
# ./run; stop it with Ctrl-C, which stops the examples' processes too (--stop-pods-on-exit: by
# default containers outlive the agent). ARGS replaces the default verbosity, e.g.
# make run ARGS=-v=4.
ARGS ?= -v=2
run: build
	$(BIN)/vk-static --pod-manifest-path=examples/manifests --root-dir=$(CURDIR)/run --pod-logs-dir=$(CURDIR)/run/log/pods --stop-pods-on-exit $(ARGS)

# demo runs a one-node cluster whose control plane the agent runs as static pods: kubeadm's
# unmodified manifests, in network and mount namespaces of the demo's own (as root), and prints
# the kubectl commands to look at it; Ctrl-C stops it all (hack/demo).
demo: build testbin
	$(GO) run ./hack/demo

# kubectl for the demo and the end-to-end tests (test/e2e drives it as a user would), built
# from the same Kubernetes release as the test control plane. It is part of testbin: after the
# API server it builds in about 3 minutes on two cores (most packages are shared).
kubectl: $(KUBECTL)

$(KUBECTL):
	cd hack/tools && CGO_ENABLED=0 $(GO) build -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kubectl

# test runs every unit, integration and end-to-end test with the race detector, the process
# runtime's cgroup tests again on cgroup v2 in a virtual machine (test-cgroupv2), then the fuzz
# targets (the manifest decoder's, the kubelet API handlers') for a bounded time. Integration
# tests find the control plane (and the end-to-end tests kubectl) through VK_STATIC_TESTBIN.
test: testbin build lint vm-testbin
	$(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) test-cgroupv2
	$(MAKE) fuzz

# test-cgroupv2 runs the cgroup-sensitive tests of the process runtime (runtime/process's
# TestCgroup*, the supervisor's TestStartWorkload*) on cgroup v2: the machines this runs on are
# cgroup v1, so in a QEMU machine booted with Debian's kernel and an initramfs of the test
# binaries (test/vm, cmd/vk-static-vmtest). Emulated (TCG, no /dev/kvm needed): about 1.5
# minutes on two cores, building included. It fails, saying why, if the machine cannot start.
test-cgroupv2: vm-testbin
	$(GO) run ./test/vm/cmd/vk-static-vmtest -kernel $(VM_KERNEL) -busybox $(VM_BUSYBOX)

# vm-testbin: QEMU (Debian's qemu-system-x86), and in a cache directory that survives
# `git clean` the machine's kernel (Debian's linux-image-amd64, the vmlinuz of the package it
# depends on) and a static busybox (busybox-static), both unpacked from their packages rather
# than installed: the host's own kernel and busybox stay as they are. apt-get installs and
# downloads what is missing, as root only; quiet when everything is there.
VMBIN     ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vk-static/vm
VM_KERNEL := $(VMBIN)/vmlinuz
VM_BUSYBOX := $(VMBIN)/busybox
vm-testbin:
	@qemu=; command -v qemu-system-x86_64 >/dev/null || qemu=qemu-system-x86; \
	[ -z "$$qemu" ] && [ -f $(VM_KERNEL) ] && [ -x $(VM_BUSYBOX) ] && exit 0; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "the cgroup v2 tests need QEMU, a kernel and a static busybox: as root, make vm-testbin"; \
		echo "installs qemu-system-x86 and unpacks linux-image-amd64's kernel and busybox-static into $(VMBIN)"; \
		exit 1; \
	fi; \
	echo "vm-testbin: $${qemu:+apt-get install $$qemu, }unpack a kernel and busybox-static into $(VMBIN)"; \
	apt-get update -qq || exit 1; \
	if [ -n "$$qemu" ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$qemu >/dev/null || exit 1; fi; \
	kernel=$$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $$2; exit}'); \
	[ -n "$$kernel" ] || { echo "no kernel package behind linux-image-amd64"; exit 1; }; \
	tmp=$$(mktemp -d) && chmod 755 $$tmp && cd $$tmp && \
	apt-get download -qq $$kernel busybox-static >/dev/null 2>&1 && \
	dpkg-deb -x $${kernel}_*.deb kernel && dpkg-deb -x busybox-static_*.deb busybox && \
	mkdir -p $(VMBIN) && cp kernel/boot/vmlinuz-* $(VM_KERNEL) && cp busybox/bin/busybox $(VM_BUSYBOX); \
	cd / && rm -rf $$tmp; \
	[ -f $(VM_KERNEL) ] && [ -x $(VM_BUSYBOX) ] && command -v qemu-system-x86_64 >/dev/null || \
		{ echo "QEMU, the kernel or busybox still missing after installing them"; exit 1; }

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./sources
	$(GO) test -run '^$$' -fuzz '^FuzzHandlers$$' -fuzztime $(FUZZTIME_API) ./node/api

testbin: $(APISERVER) $(CONTROLLER_MANAGER) $(ETCD) $(KUBECTL) cri-testbin dbus-testbin kubeadm-testbin

# cri-testbin: the CRI provider's tests start a throwaway containerd of their own
# (test/support/testcontainerd) that runs containers with runc, is driven by ctr (it comes with
# containerd) for image imports, and reports NetworkReady through the loopback CNI plugin
# (containernetworking-plugins). Debian packages them; apt-get installs what is missing, as root
# only. Quiet when everything is there.
CRI_PACKAGES := containerd runc containernetworking-plugins
cri-testbin:
	@have() { command -v $$1 >/dev/null || [ -x /usr/local/sbin/$$1 ] || [ -x /usr/sbin/$$1 ] || [ -x /sbin/$$1 ]; }; \
	complete() { \
		for c in containerd containerd-shim-runc-v2 ctr runc; do have $$c || return 1; done; \
		[ -x /usr/lib/cni/loopback ] || [ -x /opt/cni/bin/loopback ]; \
	}; \
	complete && exit 0; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "the CRI tests need containerd (with ctr), runc and the CNI loopback plugin:"; \
		echo "install the packages $(CRI_PACKAGES) (as root: apt-get install -y $(CRI_PACKAGES))"; \
		exit 1; \
	fi; \
	echo "apt-get install $(CRI_PACKAGES)"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CRI_PACKAGES) >/dev/null || exit 1; \
	complete || { echo "containerd, ctr, runc or the CNI loopback plugin still missing after installing $(CRI_PACKAGES)"; exit 1; }

# dbus-testbin: the node shutdown tests (nodeshutdown, lifecycle) start a private D-Bus daemon
# with a fake logind on it (test/support/fakelogind). Debian's dbus-daemon; installed as
# cri-testbin installs its packages.
DBUS_PACKAGES := dbus-daemon
dbus-testbin:
	@command -v dbus-daemon >/dev/null && exit 0; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "the node shutdown tests need dbus-daemon: install the package $(DBUS_PACKAGES) (as root: apt-get install -y $(DBUS_PACKAGES))"; \
		exit 1; \
	fi; \
	echo "apt-get install $(DBUS_PACKAGES)"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DBUS_PACKAGES) >/dev/null || exit 1; \
	command -v dbus-daemon >/dev/null || { echo "dbus-daemon still missing after installing $(DBUS_PACKAGES)"; exit 1; }

$(APISERVER):
	cd hack/tools && CGO_ENABLED=0 $(GO) build -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-apiserver

# kube-controller-manager signs and approves the certificate requests of a joining agent
# (test/e2ejoin); test/support/testenv starts it only for the packages that ask for it.
$(CONTROLLER_MANAGER):
	cd hack/tools && CGO_ENABLED=0 $(GO) build -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-controller-manager

$(ETCD):
	cd hack/tools && CGO_ENABLED=0 $(GO) build -o $@ go.etcd.io/etcd/server/v3

# kubeadm-testbin: kubeadm, which writes test/e2ekubeadm's control plane (certificates,
# kubeconfigs, the four static pods' manifests, bootstrap tokens), and kube-scheduler, the one
# component of it testbin lacks. They are built from their own module, test/e2ekubeadm/tools:
# kubeadm needs go.sum entries hack/tools lacks (corefile-migration, system-validators), and
# hack/tools/go.sum keys the control plane's cache. Its go.sum keys this cache. KUBE_LDFLAGS
# matter for kubeadm: without them it takes itself for v1.0.0-placeholder-version, the release
# it defaults and checks the cluster's by. A few minutes on two cores after kube-apiserver's
# build, whose packages they share; tests find them through VK_STATIC_KUBEADMBIN.
KUBEADM_TOOLS_KEY := $(shell sha256sum test/e2ekubeadm/tools/go.sum | cut -c1-12)
KUBEADMBIN ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vk-static/kubeadm/$(KUBE_VERSION)-$(KUBEADM_TOOLS_KEY)
KUBEADM_BINS := $(KUBEADMBIN)/kubeadm $(KUBEADMBIN)/kube-scheduler

export VK_STATIC_KUBEADMBIN := $(KUBEADMBIN)

kubeadm-testbin: $(KUBEADM_BINS)

$(KUBEADM_BINS):
	cd test/e2ekubeadm/tools && CGO_ENABLED=0 $(GO) build -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/$(notdir $@)

# lint also fails on an untidy go.mod/go.sum (a direct dependency marked indirect, a missing or
# stale requirement), printing the diff. hack/tools is not checked: its go.sum keys the cached
# control-plane build, so it changes only on purpose.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "go.mod is not tidy: run go mod tidy"; exit 1; }

# KWOK, the bench's peer, is built from its Go module (bench/tools, a module of its own so that
# KWOK's dependencies never enter the agent's go.mod) into a cache directory keyed by
# bench/tools/go.sum, as the control plane is (about a minute on an idle machine).
KWOK_VERSION := v0.8.0
BENCH_TOOLS_KEY := $(shell sha256sum bench/tools/go.sum | cut -c1-12)
BENCHBIN  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vk-static/benchbin/$(KWOK_VERSION)-$(BENCH_TOOLS_KEY)
KWOK      := $(BENCHBIN)/kwok

$(KWOK):
	cd bench/tools && CGO_ENABLED=0 $(GO) build -o $@ sigs.k8s.io/kwok/cmd/kwok

# The kubelet, cri-50's peer in bench-full (issue 16), is built from the Kubernetes module like
# the control plane, but in a module of its own (bench/kubelet/tools): it needs go.sum entries
# that hack/tools lacks, and hack/tools/go.sum keys the control plane's cache. Its own go.sum
# keys the kubelet's (about 2 minutes after kube-apiserver's build, whose packages it shares).
KUBELET_TOOLS_KEY := $(shell sha256sum bench/kubelet/tools/go.sum | cut -c1-12)
KUBELETBIN ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vk-static/benchbin/kubelet-$(KUBE_VERSION)-$(KUBELET_TOOLS_KEY)
KUBELET   := $(KUBELETBIN)/kubelet

$(KUBELET):
	cd bench/kubelet/tools && CGO_ENABLED=0 $(GO) build -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kubelet

# bench runs the quick scenarios (api-1k, static-1k, edit-latency, idle-1k, api-latency,
# process-100) against the built agent and a fresh control plane. api-1k runs vk-static, the
# floor agent (bench/floor) and KWOK alternately, static-1k vk-static and the floor (KWOK has
# no static pods), three rounds each, and prints their medians side by side with ratios (about
# 12 minutes). bench-full adds api-10k (the three side by side), cri-50 beside the kubelet
# itself (as root: the whole run then goes into a network namespace of its own, since the
# kubelet refuses a loopback node IP; the CNI loopback plugin comes with testbin) and agents-20
# (20 agents on one control plane); bench-cri runs only cri-50 beside the kubelet and the CRI
# floor (bench/floor's CRIAgent; root, about 5 minutes a round of the three). Results go to bench/results/last.json. BENCH_ARGS passes harness flags,
# e.g. BENCH_ARGS='-profiles /tmp/prof' or '-rounds 5'; compare two runs with
# `go run ./bench/cmd/vkbench compare OLD.json NEW.json`. See docs/performance.md.
BENCH_ARGS ?=
BENCH_PEERS := -peers floor,kwok -kwok $(KWOK)
bench: testbin build $(KWOK)
	$(GO) run ./bench/cmd/vkbench -scenarios quick $(BENCH_PEERS) $(BENCH_ARGS)

bench-full: testbin build $(KWOK) $(KUBELET)
	@peers='$(BENCH_PEERS)'; \
	if [ "$$(id -u)" = 0 ]; then peers='-peers floor,kwok,kubelet,crifloor -kwok $(KWOK) -kubelet $(KUBELET)'; \
	else echo "not root: cri-50 runs without the kubelet beside it (it needs a network namespace of its own)"; fi; \
	echo "$(GO) run ./bench/cmd/vkbench -scenarios all $$peers $(BENCH_ARGS)"; \
	$(GO) run ./bench/cmd/vkbench -scenarios all $$peers $(BENCH_ARGS)

bench-cri: testbin build $(KUBELET)
	$(GO) run ./bench/cmd/vkbench -scenarios cri-50 -peers kubelet,crifloor -kubelet $(KUBELET) $(BENCH_ARGS)

# bench-heap reports the agent's live heap per API pod at 1k and 10k pods (agent's
# BenchmarkHeapPerAPIPod, the whole agent in process on the test control plane; about 3 minutes).
bench-heap: testbin
	$(GO) test -run '^$$' -bench HeapPerAPIPod -benchtime 1x ./agent/

clean:
	rm -rf $(BIN)

# conformance runs the upstream Kubernetes $(KUBE_VERSION) e2e [NodeConformance] specs against a
# one-node cluster whose node is the agent under test: vk-static --provider $(PROVIDER) (cri by
# default; PROVIDER=process runs the subset a host-process runtime can pass) or, with
# AGENT=kubelet, the kubelet of the same release as the reference. Everything (control plane,
# scheduler, a containerd with a bridge CNI pod network, the image registry, the agent) runs in
# a network namespace of its own; root only. FOCUS and SKIP replace the ginkgo regular
# expressions, e.g. make conformance FOCUS='Downward API'; PROCS sets ginkgo's parallelism. The
# JUnit report and a summary land in $(CONFORMANCE_OUT) (docs/conformance.md). Not part of
# `make test`: the kubelet passes the default set in about 15 minutes on two cores, and every
# failing spec waits out a pod-start timeout.
#
# The suite, ginkgo, kube-scheduler, the kubelet and the test images' binaries are built from
# test/conformance/tools (a module of its own) into a cache directory keyed by its go.sum, as the
# control plane is (the first build took about 40 minutes on two cores shared with other builds).
AGENT     ?= vk-static
PROVIDER  ?= cri
FOCUS     ?= \[NodeConformance\]
SKIP      ?= \[Serial\]|\[Disruptive\]|\[Slow\]|\[Flaky\]|\[Feature:
PROCS     ?= 8
CONFORMANCE_OUT ?= $(CURDIR)/conformance-out
CONFORMANCE_ARGS ?=
CONFORMANCE_TOOLS_KEY := $(shell sha256sum test/conformance/tools/go.sum | cut -c1-12)
CONFORMANCEBIN ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vk-static/conformance/$(KUBE_VERSION)-$(CONFORMANCE_TOOLS_KEY)
CONFORMANCE_BINS := $(addprefix $(CONFORMANCEBIN)/,e2e.test ginkgo kube-scheduler kubelet agnhost nonewprivs)
# The look-alike images are made of Debian's static busybox and bash, curl, netcat and glibc's
# getent and hostname (with their libraries); the pod network of its CNI plugins.
CONFORMANCE_PACKAGES := busybox-static bash-static curl netcat-openbsd hostname libc-bin containernetworking-plugins iptables

.PHONY: conformance conformance-bin conformance-packages
conformance: build testbin conformance-bin conformance-packages
	@[ "$$(id -u)" = 0 ] || { echo "make conformance runs as root: network namespaces, containerd, a bridge"; exit 1; }
	$(GO) run ./test/conformance/cmd/conformance -agent '$(AGENT)' -provider '$(PROVIDER)' \
		-bin $(CONFORMANCEBIN) -testbin $(TESTBIN) -out '$(CONFORMANCE_OUT)' \
		-focus '$(FOCUS)' -skip '$(SKIP)' -procs $(PROCS) $(CONFORMANCE_ARGS)

conformance-bin: $(CONFORMANCE_BINS)

# Quiet when everything is there; apt-get installs what is missing, as root only.
conformance-packages:
	@missing=; for p in $(CONFORMANCE_PACKAGES); do \
		dpkg-query -W -f '$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "make conformance needs the packages$$missing (as root: apt-get install -y$$missing)"; exit 1; \
	fi; \
	echo "apt-get install$$missing"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null

$(CONFORMANCEBIN)/e2e.test:
	cd test/conformance/tools && CGO_ENABLED=0 $(GO) test -c -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/test/e2e

$(CONFORMANCEBIN)/ginkgo:
	cd test/conformance/tools && CGO_ENABLED=0 $(GO) build -o $@ github.com/onsi/ginkgo/v2/ginkgo

$(CONFORMANCEBIN)/kube-scheduler $(CONFORMANCEBIN)/kubelet:
	cd test/conformance/tools && CGO_ENABLED=0 $(GO) build -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/$(notdir $@)

# The images' binaries run on a busybox root file system: static, no cgo.
$(CONFORMANCEBIN)/agnhost $(CONFORMANCEBIN)/nonewprivs:
	cd test/conformance/tools && CGO_ENABLED=0 $(GO) build -o $@ k8s.io/kubernetes/test/images/$(notdir $@)
