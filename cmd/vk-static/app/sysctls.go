package app

import (
	"github.com/spf13/pflag"

	kubeletv1beta1 "github.com/vk-static/vk-static/cmd/vk-static/internal/kubeletconfig/v1beta1"
	"github.com/vk-static/vk-static/lifecycle"
)

// addSysctlFlags registers the kubelet's --allowed-unsafe-sysctls: the sysctls pods may set
// besides the safe ones; a pod setting any other is refused (SysctlForbidden), as the kubelet
// refuses it.
func (o *options) addSysctlFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.AllowedUnsafeSysctls, "allowed-unsafe-sysctls", o.AllowedUnsafeSysctls,
		"Comma-separated list of unsafe sysctls or sysctl patterns (ending in *) pods may set besides the safe ones; a pod setting any other is refused with reason SysctlForbidden. Use these at your own risk.")
}

// validateSysctls refuses a pattern the kubelet refuses at start-up.
func (o *options) validateSysctls(bad func(flag, format string, args ...any)) {
	if err := lifecycle.ValidateAllowedUnsafeSysctls(o.AllowedUnsafeSysctls); err != nil {
		bad("allowed-unsafe-sysctls", "%v", err)
	}
}

// applySysctlConfig applies a KubeletConfiguration's allowedUnsafeSysctls.
func applySysctlConfig(cfg *kubeletv1beta1.KubeletConfiguration, o *options, set func(flag string, apply func())) {
	if len(cfg.AllowedUnsafeSysctls) > 0 {
		set("allowed-unsafe-sysctls", func() { o.AllowedUnsafeSysctls = cfg.AllowedUnsafeSysctls })
	}
}
