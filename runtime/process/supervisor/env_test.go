package supervisor

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// HOSTNAME is the node's unless the container sets its own, as containerd gives it to a pod on
// the host's network.
func TestEnvHostname(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		config []string
		want   string
	}{
		{"not set: the node's", []string{"A=1"}, "HOSTNAME=" + host},
		{"set by the container", []string{"HOSTNAME=mine"}, "HOSTNAME=mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &supervisor{rec: records.Workload{Config: records.WorkloadConfig{Env: tc.config}}}
			var got []string
			for _, kv := range s.env() {
				if strings.HasPrefix(kv, "HOSTNAME=") {
					got = append(got, kv)
				}
			}
			assert.Equal(t, []string{tc.want}, got)
		})
	}
}
