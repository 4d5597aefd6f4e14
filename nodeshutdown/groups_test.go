package nodeshutdown

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/podutil"
)

func pod(name string, priority *int32, grace *int64) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Priority: priority, TerminationGracePeriodSeconds: grace}}
}

// The kubelet's migrateConfig: shutdownGracePeriod and shutdownGracePeriodCriticalPods as two
// bands.
func TestGroupsMigrated(t *testing.T) {
	for _, tc := range []struct {
		name           string
		grace, crit    time.Duration
		byPriority     []PriorityGracePeriod
		want           []PriorityGracePeriod
		wantRequested  time.Duration
		wantNotEnabled bool
	}{
		{name: "none", wantNotEnabled: true},
		{name: "critical above the whole", grace: 10 * time.Second, crit: 20 * time.Second, wantNotEnabled: true},
		{name: "both", grace: 30 * time.Second, crit: 10 * time.Second,
			want: []PriorityGracePeriod{{0, 20}, {eviction.SystemCriticalPriority, 10}}, wantRequested: 30 * time.Second},
		{name: "no critical part", grace: 300 * time.Second,
			want: []PriorityGracePeriod{{0, 300}, {eviction.SystemCriticalPriority, 0}}, wantRequested: 300 * time.Second},
		{name: "whole seconds", grace: 2500 * time.Millisecond, crit: time.Second,
			want: []PriorityGracePeriod{{0, 1}, {eviction.SystemCriticalPriority, 1}}, wantRequested: 2 * time.Second},
		{name: "by priority, sorted", byPriority: []PriorityGracePeriod{{100000, 10}, {0, 60}, {10000, 20}},
			want: []PriorityGracePeriod{{0, 60}, {10000, 20}, {100000, 10}}, wantRequested: 90 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{GracePeriod: tc.grace, GracePeriodCriticalPods: tc.crit, ByPodPriority: tc.byPriority}
			assert.Equal(t, tc.want, Groups(c))
			assert.Equal(t, !tc.wantNotEnabled, c.Enabled())
			assert.Equal(t, tc.wantRequested, periodRequested(Groups(c)))
		})
	}
}

// The kubelet's groupByPriority: the highest band not above the pod's priority, the lowest
// below them all; a static or mirror pod counts as critical.
func TestGroupByPriority(t *testing.T) {
	bands := []PriorityGracePeriod{{1, 10}, {2, 20}, {3, 30}, {4, 40}}
	low, p1, p2, p23, p3, high := pod("low", ptr.To[int32](0), nil), pod("p1", ptr.To[int32](1), nil), pod("p2", ptr.To[int32](2), nil),
		pod("p2.5", ptr.To[int32](2), nil), pod("p3", ptr.To[int32](3), nil), pod("high", ptr.To[int32](1000), nil)
	none := pod("none", nil, nil)
	groups := groupByPriority(bands, []*corev1.Pod{low, p1, p2, p23, p3, high, none})
	assert.Equal(t, []Group{
		{bands[0], []*corev1.Pod{low, p1, none}},
		{bands[1], []*corev1.Pod{p2, p23}},
		{bands[2], []*corev1.Pod{p3}},
		{bands[3], []*corev1.Pod{high}},
	}, groups)

	static := pod("static", nil, nil)
	static.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: "file"}
	mirror := pod("mirror", ptr.To[int32](0), nil)
	mirror.Annotations = map[string]string{podutil.ConfigMirrorAnnotationKey: "x"}
	nodeCritical := pod("node-critical", ptr.To[int32](2000001000), nil)
	migrated := Groups(Config{GracePeriod: 30 * time.Second, GracePeriodCriticalPods: 10 * time.Second})
	groups = groupByPriority(migrated, []*corev1.Pod{none, static, mirror, nodeCritical, high})
	assert.Equal(t, []*corev1.Pod{none, high}, groups[0].Pods)
	assert.Equal(t, []*corev1.Pod{static, mirror, nodeCritical}, groups[1].Pods)
}

// The kubelet's killPods: the band's grace period, or the pod's own if shorter.
func TestPodGrace(t *testing.T) {
	band := PriorityGracePeriod{0, 20}
	assert.Equal(t, 20*time.Second, podGrace(band, pod("unset", nil, nil)))
	assert.Equal(t, 20*time.Second, podGrace(band, pod("longer", nil, ptr.To[int64](30))))
	assert.Equal(t, 5*time.Second, podGrace(band, pod("shorter", nil, ptr.To[int64](5))))
	assert.Equal(t, time.Duration(0), podGrace(band, pod("zero", nil, ptr.To[int64](0))))
}

// The kubelet's validation, naming the configuration's fields.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{name: "ok", c: Config{GracePeriod: 30 * time.Second, GracePeriodCriticalPods: 10 * time.Second}},
		{name: "critical longer", c: Config{GracePeriod: 10 * time.Second, GracePeriodCriticalPods: 20 * time.Second},
			want: "shutdownGracePeriodCriticalPods 20s must be <= shutdownGracePeriod 10s"},
		{name: "sub-second", c: Config{GracePeriod: 500 * time.Millisecond},
			want: "shutdownGracePeriod 500ms must be either zero or otherwise >= 1 sec"},
		{name: "negative critical", c: Config{GracePeriod: 10 * time.Second, GracePeriodCriticalPods: -time.Second},
			want: "shutdownGracePeriodCriticalPods -1s must be either zero or otherwise >= 1 sec"},
		{name: "both", c: Config{GracePeriod: 10 * time.Second, ByPodPriority: []PriorityGracePeriod{{0, 10}}},
			want: "cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time"},
		{name: "negative band", c: Config{ByPodPriority: []PriorityGracePeriod{{0, -1}}},
			want: "shutdownGracePeriodByPodPriority[0].shutdownGracePeriodSeconds -1 must not be negative"},
		{name: "duplicate band", c: Config{ByPodPriority: []PriorityGracePeriod{{5, 1}, {5, 2}}},
			want: "shutdownGracePeriodByPodPriority[1].priority 5 appears twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
