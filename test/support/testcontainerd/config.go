package testcontainerd

import (
	_ "embed"
	"os"
	"path/filepath"
	"strconv"
	"text/template"
)

//go:embed containerd.toml
var configTemplate string

// loopbackConflist is the one CNI network of Options.LoopbackCNI: enough for containerd to
// report NetworkReady (the kubelet waits for it), with no network beyond a pod's lo.
const loopbackConflist = `{"cniVersion":"0.4.0","name":"lo-only","plugins":[{"type":"loopback"}]}`

// layout is where an instance keeps everything, all under dir.
type layout struct {
	Dir, Root, State, Address, Opt, RuncRoot, CNIBin, CNIConf, SandboxImage string
	Config, Log                                                             string
	// IPAM is host-local's dataDir (its allocations) for a Bridge network.
	IPAM string
}

func newLayout(dir string) layout {
	return layout{
		Dir:          dir,
		Root:         filepath.Join(dir, "root"),
		State:        filepath.Join(dir, "state"),
		Address:      filepath.Join(dir, "containerd.sock"),
		Opt:          filepath.Join(dir, "opt"),
		RuncRoot:     filepath.Join(dir, "runc"),
		CNIBin:       filepath.Join(dir, "cni", "bin"),
		CNIConf:      filepath.Join(dir, "cni", "net.d"),
		SandboxImage: SandboxImage,
		Config:       filepath.Join(dir, "config.toml"),
		Log:          filepath.Join(dir, "containerd.log"),
		IPAM:         filepath.Join(dir, "cni", "ipam"),
	}
}

// write creates the directories, the configuration and the CNI network bin's plugins make
// (none without plugins; the loopback-only network with loopback alone; bridge's network).
func (l layout) write(bin binaries, bridge *Bridge) error {
	for _, d := range []string{l.Root, l.State, l.Opt, l.RuncRoot, l.CNIBin, l.CNIConf} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	// TOML's basic strings escape as Go's quoted strings do for the paths used here.
	tmpl, err := template.New("containerd.toml").Funcs(template.FuncMap{"quote": strconv.Quote}).Parse(configTemplate)
	if err != nil {
		return err
	}
	f, err := os.Create(l.Config)
	if err != nil {
		return err
	}
	if err := tmpl.Execute(f, l); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if bin.cniDir == "" {
		return nil
	}
	if err := copyPlugins(bin.cniDir, l.CNIBin, bin.cniPlugins); err != nil {
		return err
	}
	if bridge == nil {
		return os.WriteFile(filepath.Join(l.CNIConf, "10-lo-only.conflist"), []byte(loopbackConflist), 0o644)
	}
	conf, err := bridge.conflist(l.IPAM)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(l.CNIConf, "10-bridge.conflist"), conf, 0o644)
}
