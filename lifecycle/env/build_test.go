package env

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/nodeobjects"
	"github.com/vk-static/vk-static/provider"
)

// objectsFake serves config maps and secrets of namespace "shop" from maps, counts reads, and
// answers fail (when set) to every read.
type objectsFake struct {
	configMaps map[string]map[string]string
	secrets    map[string]map[string]string
	fail       error
	reads      map[string]int
}

func (f *objectsFake) GetConfigMap(_ context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	f.count("configMap/" + name)
	if f.fail != nil {
		return nil, f.fail
	}
	data, ok := f.configMaps[name]
	if !ok || namespace != "shop" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}, nil
}

func (f *objectsFake) GetSecret(_ context.Context, namespace, name string) (*corev1.Secret, error) {
	f.count("secret/" + name)
	if f.fail != nil {
		return nil, f.fail
	}
	data, ok := f.secrets[name]
	if !ok || namespace != "shop" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s, nil
}

func (f *objectsFake) count(key string) {
	if f.reads == nil {
		f.reads = map[string]int{}
	}
	f.reads[key]++
}

func newObjects() *objectsFake {
	return &objectsFake{
		configMaps: map[string]map[string]string{
			"cfg":   {"B": "cfg-b", "A": "cfg-a", "PATH": "/bin"},
			"other": {"A": "other-a", "C": "other-c"},
			"weird": {"ok": "1", "has=eq": "2", "tab\tkey": "3", "": "4"},
		},
		secrets: map[string]map[string]string{
			"db": {"password": "s3cret", "user": "admin"},
		},
	}
}

// Helpers that keep the table readable.
func ptr[T any](v T) *T { return &v }

func val(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

func cmKey(name, obj, key string, optional bool) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: obj}, Key: key, Optional: optionalPtr(optional)}}}
}

func secretKey(name, obj, key string, optional bool) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: obj}, Key: key, Optional: optionalPtr(optional)}}}
}

func field(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
}

func resourceField(name string, ref corev1.ResourceFieldSelector) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &ref}}
}

func fromCM(obj, prefix string, optional bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{Prefix: prefix, ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: obj}, Optional: optionalPtr(optional)}}
}

func fromSecret(obj, prefix string, optional bool) corev1.EnvFromSource {
	return corev1.EnvFromSource{Prefix: prefix, SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: obj}, Optional: optionalPtr(optional)}}
}

// optionalPtr gives false as nil, the way most manifests leave it.
func optionalPtr(optional bool) *bool {
	if optional {
		return ptr(true)
	}
	return nil
}

func buildPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			NodeName: "node-1", ServiceAccountName: "sa",
			Containers: []corev1.Container{
				{Name: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}},
				{Name: "sidecar", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}},
			},
		},
	}
}

func buildFacts() PodFacts {
	return PodFacts{
		HostIPs: []string{"10.0.0.1", "fd00::1"},
		PodIPs:  []string{"10.1.0.5"},
		Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("4"),
			corev1.ResourceMemory: resource.MustParse("8Gi"),
		},
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name    string
		envFrom []corev1.EnvFromSource
		env     []corev1.EnvVar
		pod     func(*corev1.Pod)
		want    []EnvVar
	}{
		{
			name: "literal values in order",
			env:  []corev1.EnvVar{val("Z", "1"), val("A", "2"), val("EMPTY", "")},
			want: []EnvVar{{"Z", "1"}, {"A", "2"}, {"EMPTY", ""}},
		},
		{
			name:    "envFrom keys sorted, sources in order, env last; a redefined name keeps its place",
			envFrom: []corev1.EnvFromSource{fromCM("cfg", "", false), fromCM("other", "", false)},
			env:     []corev1.EnvVar{val("D", "env-d"), val("B", "env-b")},
			want:    []EnvVar{{"A", "other-a"}, {"B", "env-b"}, {"PATH", "/bin"}, {"C", "other-c"}, {"D", "env-d"}},
		},
		{
			name: "a later env entry overrides an earlier one",
			env:  []corev1.EnvVar{val("X", "1"), val("Y", "2"), val("X", "3")},
			want: []EnvVar{{"X", "3"}, {"Y", "2"}},
		},
		{
			name:    "envFrom prefixes",
			envFrom: []corev1.EnvFromSource{fromCM("other", "CFG_", false), fromSecret("db", "DB_", false)},
			want:    []EnvVar{{"CFG_A", "other-a"}, {"CFG_C", "other-c"}, {"DB_password", "s3cret"}, {"DB_user", "admin"}},
		},
		{
			name: "dependent variables see what precedes them only",
			env: []corev1.EnvVar{
				val("HOST", "db"), val("URL", "postgres://$(HOST):$(PORT)/x"), val("PORT", "5432"), val("URL2", "$(HOST):$(PORT)"),
			},
			want: []EnvVar{{"HOST", "db"}, {"URL", "postgres://db:$(PORT)/x"}, {"PORT", "5432"}, {"URL2", "db:5432"}},
		},
		{
			name:    "dependent variables see envFrom and valueFrom values, and a name's previous value",
			envFrom: []corev1.EnvFromSource{fromCM("cfg", "", false)},
			env:     []corev1.EnvVar{field("NODE", "spec.nodeName"), val("PATH", "$(PATH):/opt/bin"), val("WHERE", "$(NODE)/$(A)")},
			want:    []EnvVar{{"A", "cfg-a"}, {"B", "cfg-b"}, {"PATH", "/bin:/opt/bin"}, {"NODE", "node-1"}, {"WHERE", "node-1/cfg-a"}},
		},
		{
			name: "values from objects are not expanded",
			env:  []corev1.EnvVar{val("A", "x"), cmKey("REF", "refs", "r", false), val("USE", "$(REF)")},
			want: []EnvVar{{"A", "x"}, {"REF", "$(A)"}, {"USE", "$(A)"}},
		},
		{
			name: "$$ escapes",
			env:  []corev1.EnvVar{val("A", "x"), val("LIT", "$$(A)"), val("DOLLAR", "$$$(A)"), val("PRICE", "$5 $$6")},
			want: []EnvVar{{"A", "x"}, {"LIT", "$(A)"}, {"DOLLAR", "$x"}, {"PRICE", "$5 $6"}},
		},
		{
			name: "key refs",
			env:  []corev1.EnvVar{cmKey("CA", "cfg", "A", false), secretKey("PASS", "db", "password", false)},
			want: []EnvVar{{"CA", "cfg-a"}, {"PASS", "s3cret"}},
		},
		{
			name:    "optional missing objects and keys define nothing and keep an earlier value",
			envFrom: []corev1.EnvFromSource{fromCM("gone", "", true), fromSecret("gone", "", true), fromCM("cfg", "", false)},
			env: []corev1.EnvVar{
				cmKey("A", "gone", "k", true), cmKey("B", "cfg", "nokey", true),
				secretKey("C", "gone", "k", true), secretKey("D", "db", "nokey", true),
			},
			want: []EnvVar{{"A", "cfg-a"}, {"B", "cfg-b"}, {"PATH", "/bin"}},
		},
		{
			name: "field refs",
			env: []corev1.EnvVar{
				field("NAME", "metadata.name"), field("NS", "metadata.namespace"), field("UID", "metadata.uid"),
				field("APP", "metadata.labels['app']"), field("NODE", "spec.nodeName"), field("SA", "spec.serviceAccountName"),
				field("HOST_IP", "status.hostIP"), field("HOST_IPS", "status.hostIPs"), field("POD_IP", "status.podIP"), field("POD_IPS", "status.podIPs"),
				{Name: "NO_VERSION", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			},
			want: []EnvVar{
				{"NAME", "web"}, {"NS", "shop"}, {"UID", "uid-1"}, {"APP", "web"}, {"NODE", "node-1"}, {"SA", "sa"},
				{"HOST_IP", "10.0.0.1"}, {"HOST_IPS", "10.0.0.1,fd00::1"}, {"POD_IP", "10.1.0.5"}, {"POD_IPS", "10.1.0.5"},
				{"NO_VERSION", "web"},
			},
		},
		{
			name: "resource refs: own container, unset limit from allocatable, another container",
			env: []corev1.EnvVar{
				resourceField("CPU_REQ", corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1m")}),
				resourceField("CPU_LIM", corev1.ResourceFieldSelector{Resource: "limits.cpu"}),
				resourceField("SIDE_MEM", corev1.ResourceFieldSelector{ContainerName: "sidecar", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}),
				resourceField("SIDE_CPU", corev1.ResourceFieldSelector{ContainerName: "sidecar", Resource: "limits.cpu"}),
			},
			want: []EnvVar{{"CPU_REQ", "250"}, {"CPU_LIM", "4"}, {"SIDE_MEM", "64"}, {"SIDE_CPU", "4"}},
		},
		{
			name: "resource refs: pod-level limits stand in for allocatable",
			pod: func(p *corev1.Pod) {
				p.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
				}}
			},
			env: []corev1.EnvVar{
				resourceField("CPU_LIM", corev1.ResourceFieldSelector{Resource: "limits.cpu"}),
				resourceField("MEM_LIM", corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Gi")}),
				resourceField("SIDE_CPU", corev1.ResourceFieldSelector{ContainerName: "sidecar", Resource: "limits.cpu"}),
			},
			want: []EnvVar{{"CPU_LIM", "2"}, {"MEM_LIM", "8"}, {"SIDE_CPU", "2"}},
		},
		{
			name: "a literal value wins over valueFrom",
			env:  []corev1.EnvVar{{Name: "X", Value: "lit", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			want: []EnvVar{{"X", "lit"}},
		},
		{
			name:    "envFrom with no source is ignored",
			envFrom: []corev1.EnvFromSource{{Prefix: "X_"}},
			want:    nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objects := newObjects()
			objects.configMaps["refs"] = map[string]string{"r": "$(A)"}
			pod := buildPod()
			if tt.pod != nil {
				tt.pod(pod)
			}
			c := pod.Spec.Containers[0].DeepCopy()
			c.EnvFrom, c.Env = tt.envFrom, tt.env
			before := pod.DeepCopy()

			res, err := Build(context.Background(), pod, c, buildFacts(), objects)
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Env)
			assert.Empty(t, res.SkippedKeys)
			assert.Equal(t, before, pod, "the pod is not changed")
		})
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name     string
		envFrom  []corev1.EnvFromSource
		env      []corev1.EnvVar
		objects  nodeobjects.ObjectGetter // newObjects() when nil, unless noGetter
		noGetter bool
		facts    *PodFacts // buildFacts() when nil
		wantMsg  string
		notFound bool
		wantErr  error
	}{
		{
			name: "required secret key missing", env: []corev1.EnvVar{secretKey("DB_PASS", "db", "pass", false)},
			wantMsg: `container "app": env "DB_PASS": secret "db" has no key "pass"`, wantErr: ErrKeyNotFound,
		},
		{
			name: "required config map key missing", env: []corev1.EnvVar{cmKey("X", "cfg", "nokey", false)},
			wantMsg: `container "app": env "X": configMap "cfg" has no key "nokey"`, wantErr: ErrKeyNotFound,
		},
		{
			name: "required secret missing", env: []corev1.EnvVar{secretKey("DB_PASS", "gone", "pass", false)},
			wantMsg: `container "app": env "DB_PASS": secret "gone" not found`, notFound: true,
		},
		{
			name: "required config map missing", env: []corev1.EnvVar{cmKey("X", "gone", "k", false)},
			wantMsg: `container "app": env "X": configMap "gone" not found`, notFound: true,
		},
		{
			name: "required envFrom config map missing", envFrom: []corev1.EnvFromSource{fromCM("gone", "", false)},
			wantMsg: `container "app": envFrom: configMap "gone" not found`, notFound: true,
		},
		{
			name: "required envFrom secret missing", envFrom: []corev1.EnvFromSource{fromSecret("gone", "P_", false)},
			wantMsg: `container "app": envFrom: secret "gone" not found`, notFound: true,
		},
		{
			name: "optional reference but the read fails otherwise", env: []corev1.EnvVar{secretKey("DB_PASS", "db", "pass", true)},
			objects: &objectsFake{fail: apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "db", errors.New("no relationship"))},
			wantMsg: `container "app": env "DB_PASS": reading secret "db": secrets "db" is forbidden: no relationship`,
		},
		{
			name: "no getter, even for an optional reference", env: []corev1.EnvVar{cmKey("X", "cfg", "k", true)},
			noGetter: true, wantErr: ErrNoObjectGetter,
			wantMsg: `container "app": env "X": configMap "cfg" cannot be read: no API client for this pod`,
		},
		{
			name: "no getter for envFrom", envFrom: []corev1.EnvFromSource{fromSecret("db", "", true)},
			noGetter: true, wantErr: ErrNoObjectGetter,
			wantMsg: `container "app": envFrom: secret "db" cannot be read: no API client for this pod`,
		},
		{
			name: "unsupported field path", env: []corev1.EnvVar{field("PHASE", "status.phase")},
			wantErr: ErrUnsupportedFieldPath, wantMsg: `container "app": env "PHASE": unsupported fieldPath "status.phase"`,
		},
		{
			name: "host IP unknown", env: []corev1.EnvVar{field("HOST", "status.hostIP")}, facts: &PodFacts{PodIP: "10.1.0.1"},
			wantErr: ErrHostIPUnknown, wantMsg: `container "app": env "HOST": fieldPath "status.hostIP": host IP unknown`,
		},
		{
			name:    "field ref of another apiVersion",
			env:     []corev1.EnvVar{{Name: "N", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v2", FieldPath: "metadata.name"}}}},
			wantErr: ErrUnsupportedSource, wantMsg: `container "app": env "N": fieldRef apiVersion "v2": unsupported env source`,
		},
		{
			name:    "unsupported resource",
			env:     []corev1.EnvVar{resourceField("GPU", corev1.ResourceFieldSelector{Resource: "limits.nvidia.com/gpu"})},
			wantErr: ErrUnsupportedResource, wantMsg: `container "app": env "GPU": unsupported container resource: "limits.nvidia.com/gpu"`,
		},
		{
			name:    "resource of an unknown container",
			env:     []corev1.EnvVar{resourceField("CPU", corev1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"})},
			wantErr: provider.ErrNotFound, wantMsg: `container "app": env "CPU": resourceFieldRef "limits.cpu": not found: container "nope"`,
		},
		{
			name:    "valueFrom without a source",
			env:     []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{}}},
			wantErr: ErrUnsupportedSource, wantMsg: `container "app": env "E": valueFrom sets no source: unsupported env source`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objects := tt.objects
			if objects == nil && !tt.noGetter {
				objects = newObjects()
			}
			facts := buildFacts()
			if tt.facts != nil {
				facts = *tt.facts
			}
			pod := buildPod()
			c := pod.Spec.Containers[0].DeepCopy()
			c.EnvFrom, c.Env = tt.envFrom, tt.env

			res, err := Build(context.Background(), pod, c, facts, objects)
			require.Error(t, err)
			assert.Equal(t, tt.wantMsg, err.Error())
			assert.Equal(t, tt.notFound, apierrors.IsNotFound(err), "IsNotFound")
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.Empty(t, res.Env, "no partial environment")
		})
	}
}

func TestBuildSkipsInvalidKeys(t *testing.T) {
	pod := buildPod()
	c := &corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{
		fromCM("weird", "", false), fromCM("cfg", "", false), fromCM("other", "bad=", false), fromSecret("db", "DB_", false),
	}}
	res, err := Build(context.Background(), pod, c, buildFacts(), newObjects())
	require.NoError(t, err)
	assert.Equal(t, []EnvVar{
		{"ok", "1"}, {"A", "cfg-a"}, {"B", "cfg-b"}, {"PATH", "/bin"}, {"DB_password", "s3cret"}, {"DB_user", "admin"},
	}, res.Env)
	require.Equal(t, []SkippedKeys{
		{Kind: "configMap", Namespace: "shop", Name: "weird", Keys: []string{"", "has=eq", "tab\tkey"}},
		{Kind: "configMap", Namespace: "shop", Name: "other", Keys: []string{"bad=A", "bad=C"}},
	}, res.SkippedKeys)
	assert.Equal(t, "Keys [bad=A, bad=C] from the EnvFrom configMap shop/other were skipped since they are considered invalid environment variable names.",
		res.SkippedKeys[1].Message())
}

func TestBuildReadsEachObjectOnce(t *testing.T) {
	objects := newObjects()
	c := &corev1.Container{Name: "app",
		EnvFrom: []corev1.EnvFromSource{fromCM("cfg", "", false), fromCM("cfg", "AGAIN_", false), fromCM("gone", "", true)},
		Env: []corev1.EnvVar{
			cmKey("X", "cfg", "A", false), secretKey("P", "db", "password", false), secretKey("U", "db", "user", false),
			cmKey("G", "gone", "k", true),
		},
	}
	_, err := Build(context.Background(), buildPod(), c, buildFacts(), objects)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"configMap/cfg": 1, "configMap/gone": 1, "secret/db": 1}, objects.reads)
}

func TestBuildWithoutReferencesNeedsNoGetter(t *testing.T) {
	c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{val("A", "1"), field("N", "metadata.name")}}
	res, err := Build(context.Background(), buildPod(), c, buildFacts(), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"A=1", "N=web"}, res.Strings())
}

func TestResultStrings(t *testing.T) {
	assert.Empty(t, Result{}.Strings())
	r := Result{Env: []EnvVar{{"A", "1"}, {"EMPTY", ""}, {"EQ", "a=b"}}}
	assert.Equal(t, []string{"A=1", "EMPTY=", "EQ=a=b"}, r.Strings())
}

// TestBuildThroughClientGetter runs Build on the fake clientset end to end: the NotFound the
// API answers must still make an optional reference skip and a required one fail.
func TestBuildThroughClientGetter(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string][]byte{"password": []byte("s3cret")}},
	)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	optional := true
	c := &corev1.Container{Name: "app", Env: []corev1.EnvVar{
		{Name: "DB_PASS", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}},
		{Name: "FLAG", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "flags"}, Key: "f", Optional: &optional}}},
	}}
	res, err := Build(ctx, pod, c, PodFacts{}, nodeobjects.NewClientGetter(kubeclienttest.Wrap(client)))
	require.NoError(t, err)
	assert.Equal(t, []EnvVar{{Name: "DB_PASS", Value: "s3cret"}}, res.Env)

	c.Env[1].ValueFrom.ConfigMapKeyRef.Optional = nil
	_, err = Build(ctx, pod, c, PodFacts{}, nodeobjects.NewClientGetter(kubeclienttest.Wrap(client)))
	require.Error(t, err)
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	assert.Equal(t, `container "app": env "FLAG": configMap "flags" not found`, err.Error())
}
