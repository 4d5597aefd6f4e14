package app

import (
	"context"
	"runtime/debug"

	"github.com/go-logr/logr"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/internal/memlimit"
)

// applyMemoryLimit sets the soft memory limit --memory-limit asks for, unless GOMEMLIMIT has
// set one. An automatic limit comes with a controller that raises it if the live heap
// outgrows it; a limit the user chose is kept as it is.
func applyMemoryLimit(o *options, logger logr.Logger) agent.Component {
	if memlimit.FromEnvironment() {
		logger.Info("Soft memory limit from GOMEMLIMIT", "limitBytes", debug.SetMemoryLimit(-1))
		return nil
	}
	limit, auto, _ := o.memoryLimit() // validated
	if limit == 0 {
		return nil
	}
	l := memlimit.New(limit)
	logger.Info("Soft memory limit", "limitBytes", limit, "auto", auto)
	if !auto {
		return nil
	}
	return memoryLimiter{l, logger}
}

// memoryLimiter adapts memlimit.Limiter to agent.Component.
type memoryLimiter struct {
	*memlimit.Limiter
	logger logr.Logger
}

func (m memoryLimiter) Run(ctx context.Context) error {
	m.Limiter.Run(ctx, m.logger)
	return nil
}
