package v1beta1

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	upstream "k8s.io/kubelet/config/v1beta1"
)

// The copy is upstream's type, field for field: the same Go names, JSON tags and types, except
// the unused fields' json.RawMessage (tagged omitempty, so /configz leaves them out); its own
// struct types are compared in turn. A k8s.io/kubelet upgrade that adds, renames or retypes a
// field fails here until [KubeletConfiguration] follows it.
func TestSameAsUpstream(t *testing.T) {
	assert.Equal(t, upstream.SchemeGroupVersion.String(), GroupVersion)
	assertSameType(t, reflect.TypeFor[KubeletConfiguration](), reflect.TypeFor[upstream.KubeletConfiguration](), "KubeletConfiguration")
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

func assertSameType(t *testing.T, ours, theirs reflect.Type, path string) {
	t.Helper()
	if theirs.Kind() == reflect.Slice && ours.Kind() == reflect.Slice {
		assertSameType(t, ours.Elem(), theirs.Elem(), path+"[]") // a list of upstream's structs
		return
	}
	if theirs.PkgPath() != reflect.TypeFor[upstream.KubeletConfiguration]().PkgPath() {
		assert.True(t, theirs == ours, "%s: %v, upstream's %v", path, ours, theirs)
		return
	}
	assert.Equal(t, theirs.Name(), ours.Name(), path)
	if !assert.Equal(t, theirs.Kind(), ours.Kind(), path) || theirs.Kind() != reflect.Struct {
		return
	}
	assert.Equal(t, theirs.NumField(), ours.NumField(), "%s: the number of fields", path)
	for want := range theirs.Fields() {
		fieldPath := path + "." + want.Name
		got, ok := ours.FieldByName(want.Name)
		if !assert.True(t, ok, "%s: missing", fieldPath) {
			continue
		}
		if got.Type == rawMessage {
			name, _, _ := strings.Cut(want.Tag.Get("json"), ",")
			assert.Equal(t, name+",omitempty", got.Tag.Get("json"), fieldPath)
			continue
		}
		assert.Equal(t, want.Tag, got.Tag, fieldPath)
		assertSameType(t, got.Type, want.Type, fieldPath)
	}
}

func TestUsedFields(t *testing.T) {
	used := UsedFields()
	for _, key := range []string{"apiVersion", "kind", "staticPodPath", "authentication", "containerRuntimeEndpoint", "allowedUnsafeSysctls",
		"shutdownGracePeriod", "shutdownGracePeriodCriticalPods", "shutdownGracePeriodByPodPriority"} {
		assert.True(t, used[key], key)
	}
	for _, key := range []string{"", "logging", "tracing", "enableServer"} {
		assert.False(t, used[key], key)
	}
}
