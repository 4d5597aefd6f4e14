package app

import (
	"flag"

	"k8s.io/klog/v2"
)

// klogFlagSet exposes klog's flags (-v, --vmodule, ...) as the kubelet does.
func klogFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	return fs
}
