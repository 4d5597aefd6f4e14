package provider

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type logsOnly struct{}

func (logsOnly) GetContainerLogs(context.Context, string, string, string, ContainerLogOpts) (io.ReadCloser, error) {
	return io.NopCloser(nil), nil
}

func TestCapability(t *testing.T) {
	var provider any = logsOnly{}

	logs, err := Capability[ContainerLogsHandler](provider)
	require.NoError(t, err)
	assert.Equal(t, logsOnly{}, logs)

	_, err = Capability[ContainerExecHandler](provider)
	require.Error(t, err)
	assert.True(t, IsNotImplemented(err), "%v", err)
	assert.True(t, IsNotImplemented(fmt.Errorf("exec: %w", err)), "through wrapping")
	assert.False(t, IsNotFound(err) || IsInvalidInput(err), "a missing capability is no other kind")
	assert.ErrorContains(t, err, "provider.ContainerExecHandler", "the error names the capability")
	assert.ErrorContains(t, err, "provider.logsOnly", "and the provider")

	_, err = Capability[StatsSummaryHandler](nil)
	assert.True(t, IsNotImplemented(err), "no provider at all: %v", err)
}
