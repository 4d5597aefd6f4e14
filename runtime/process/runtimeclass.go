package process

import (
	"fmt"

	"github.com/vk-static/vk-static/lifecycle"
)

// runtimeHandler refuses a sandbox whose pod's RuntimeClass has a handler (every RuntimeClass
// has one): processes have only the default, empty one. As on a CRI runtime that lacks the
// handler, the sandbox fails (the lifecycle's FailedCreatePodSandBox event says why) and the
// pod waits, Pending.
func runtimeHandler(cfg *lifecycle.SandboxConfig) error {
	if cfg.RuntimeHandler == "" {
		return nil
	}
	class := ""
	if cfg.Pod != nil && cfg.Pod.Spec.RuntimeClassName != nil {
		class = *cfg.Pod.Spec.RuntimeClassName
	}
	return fmt.Errorf("runtime handler %q of RuntimeClass %q is not configured: the process provider has no runtime handlers, only the default (empty) one",
		cfg.RuntimeHandler, class)
}
