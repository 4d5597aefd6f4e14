package podnet

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The pod network is the first configuration by file name, a .conflist as it is and a single
// plugin's .conf as a list of one, as containerd picks it; none is ErrNoNetwork.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	n := New(Config{ConfDir: dir})
	if err := n.Ready(); !errors.Is(err, ErrNoNetwork) {
		t.Fatalf("an empty directory: %v, want ErrNoNetwork", err)
	}
	if err := New(Config{ConfDir: filepath.Join(dir, "absent")}).Ready(); !errors.Is(err, ErrNoNetwork) {
		t.Fatalf("no directory: %v, want ErrNoNetwork", err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("20-second.conflist", `{"cniVersion": "1.0.0", "name": "second", "plugins": [{"type": "bridge"}]}`)
	write("README", "not a configuration")
	list, err := n.load()
	if err != nil || list.Name != "second" {
		t.Fatalf("load: %v, %+v", err, list)
	}
	write("10-first.conf", `{"cniVersion": "0.4.0", "name": "first", "type": "ptp"}`)
	list, err = n.load()
	if err != nil || list.Name != "first" || len(list.Plugins) != 1 || list.Plugins[0].Network.Type != "ptp" {
		t.Fatalf("load: %v, %+v", err, list)
	}
	write("00-broken.conflist", `{"name": `)
	if _, err := n.load(); err == nil || errors.Is(err, ErrNoNetwork) {
		t.Fatalf("a broken first configuration: %v, want its error", err)
	}
}

// The pod's CNI arguments are the kubelet's, and its host ports are the portMappings
// capability only when it has some.
func TestRuntimeConf(t *testing.T) {
	rt := runtimeConf(Pod{Namespace: "ns", Name: "p", UID: "u", SandboxID: "s", NetNS: "/proc/1/ns/net"})
	want := map[string]string{"IgnoreUnknown": "1", "K8S_POD_NAMESPACE": "ns", "K8S_POD_NAME": "p", "K8S_POD_INFRA_CONTAINER_ID": "s", "K8S_POD_UID": "u"}
	for _, kv := range rt.Args {
		if want[kv[0]] != kv[1] {
			t.Errorf("%s=%s, want %q", kv[0], kv[1], want[kv[0]])
		}
		delete(want, kv[0])
	}
	if len(want) > 0 || rt.IfName != "eth0" || rt.ContainerID != "s" || rt.CapabilityArgs != nil {
		t.Errorf("runtimeConf: %+v (missing %v)", rt, want)
	}
	rt = runtimeConf(Pod{Ports: []PortMapping{{HostPort: 80, ContainerPort: 8080, Protocol: "tcp"}}})
	if ports, ok := rt.CapabilityArgs["portMappings"].([]PortMapping); !ok || len(ports) != 1 {
		t.Errorf("portMappings: %+v", rt.CapabilityArgs)
	}
}
