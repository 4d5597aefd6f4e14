package sources

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/vk-static/vk-static/podutil"
)

const manifests = "../testdata/manifests"

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(manifests, name))
	require.NoError(t, err)
	return data
}

func fileOpts(location string) DecodeOptions {
	return DecodeOptions{NodeName: "Node-A", Source: podutil.FileSource, Location: location}
}

func TestDecodeBadManifests(t *testing.T) {
	for _, tc := range []struct {
		file  string
		class error
		want  []string // every one must appear in the message
	}{
		{"bad/syntax.yaml", ErrSyntax, []string{"document 1", "malformed YAML", "line 4"}},
		{"bad/garbage.yaml", ErrSyntax, []string{"document 1", "malformed YAML"}},
		{"bad/wrong-kind.yaml", ErrNotAPod, []string{"document 1", `"apps/v1"`, `"Deployment"`}},
		{"bad/no-name.yaml", ErrInvalid, []string{"metadata.name: Required value"}},
		{"bad/secret-env.yaml", ErrForbiddenReference, []string{"spec.containers[0].env[0].valueFrom.secretKeyRef", `secret "db"`, "static pods cannot reference API objects"}},
		{"bad/service-account.yaml", ErrForbiddenReference, []string{"spec.serviceAccountName", `"deployer"`, "static pods cannot reference API objects"}},
		{"bad/configmap-volume.yaml", ErrForbiddenReference, []string{"spec.volumes[0].configMap", `"cfg"`, "static pods cannot reference API objects"}},
		{"bad/invalid-spec.yaml", ErrInvalid, []string{`spec.containers[1].name: Duplicate value: "same"`, `spec.containers[2].name: Invalid value: "Not_A_DNS_Label"`}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			location := filepath.Join("/etc/manifests", filepath.Base(tc.file))
			pods, err := DecodeManifest(testdata(t, tc.file), fileOpts(location))
			require.Error(t, err)
			assert.Nil(t, pods)
			assert.ErrorIs(t, err, tc.class)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, location, de.Location)
			for _, p := range de.Problems {
				assert.ErrorIs(t, p.Class, tc.class, "only %v problems expected, got %s", tc.class, p)
			}
			assert.True(t, strings.HasPrefix(err.Error(), location+": "), err.Error())
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The files a directory source must skip are valid pods: skipping them is the file source's job.
func TestDecodeIgnoredFilesAreValid(t *testing.T) {
	for _, f := range []string{"bad/.hidden.yaml", "bad/web.yaml.swp", "bad/web.yaml~"} {
		pods, err := DecodeManifest(testdata(t, f), fileOpts(f))
		require.NoError(t, err, f)
		require.Len(t, pods, 1)
		assert.Equal(t, "must-not-appear-node-a", pods[0].Name)
	}
}

func TestDecodeGoodManifests(t *testing.T) {
	for _, tc := range []struct {
		file  string
		names []string // namespace/name
	}{
		{"good/ticker.yaml", []string{"default/ticker-node-a"}},
		{"good/web.yaml", []string{"default/web-node-a"}},
		{"good/once.yaml", []string{"default/once-node-a"}},
		{"good/crashloop.yaml", []string{"default/crashloop-node-a"}},
		{"good/with-init.yaml", []string{"default/with-init-node-a"}},
		{"good/graceful.yaml", []string{"default/graceful-node-a"}},
		{"good/control-plane-etcd.yaml", []string{"kube-system/etcd-node-a"}},
		{"good/two-pods.yaml", []string{"default/pair-a-node-a", "tools/pair-b-node-a"}},
		{"good/podlist.json", []string{"default/remote-one-node-a", "edge/remote-two-node-a"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			pods, err := DecodeManifest(testdata(t, tc.file), fileOpts("/etc/manifests/"+filepath.Base(tc.file)))
			require.NoError(t, err)
			var names []string
			for _, pod := range pods {
				names = append(names, pod.Namespace+"/"+pod.Name)
				assert.Equal(t, "Node-A", pod.Spec.NodeName)
				assert.NotEmpty(t, pod.UID)
				assert.Equal(t, string(pod.UID), pod.Annotations[podutil.ConfigHashAnnotationKey])
				assert.Equal(t, podutil.FileSource, pod.Annotations[podutil.ConfigSourceAnnotationKey])
				assert.NotEmpty(t, pod.Annotations[podutil.ConfigFirstSeenAnnotationKey])
				assert.Equal(t, corev1.PodPending, pod.Status.Phase)
				assert.True(t, podutil.IsStaticPod(pod))
			}
			assert.Equal(t, tc.names, names)
		})
	}
}

// The kubeadm-style etcd manifest must come out with every field it went in with.
func TestDecodeRoundTripKeepsEveryField(t *testing.T) {
	data := testdata(t, "good/control-plane-etcd.yaml")
	pods, err := DecodeManifest(data, fileOpts("/etc/kubernetes/manifests/etcd.yaml"))
	require.NoError(t, err)
	require.Len(t, pods, 1)

	var original, decoded map[string]any
	require.NoError(t, yaml.Unmarshal(data, &original))
	encoded, err := json.Marshal(pods[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(encoded, &decoded))

	// The name is the one field that changes by design.
	original["metadata"].(map[string]any)["name"] = "etcd-node-a"
	assertSubset(t, "", original, decoded)
}

// assertSubset fails for every value in want that got does not hold identically.
func assertSubset(t *testing.T, path string, want, got any) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !assert.True(t, ok, "%s: want an object, got %v", path, got) {
			return
		}
		for k, v := range w {
			gv, ok := g[k]
			if !assert.True(t, ok, "%s.%s lost", path, k) {
				continue
			}
			assertSubset(t, path+"."+k, v, gv)
		}
	case []any:
		g, ok := got.([]any)
		if !assert.True(t, ok, "%s: want a list, got %v", path, got) || !assert.Len(t, g, len(w), path) {
			return
		}
		for i := range w {
			assertSubset(t, fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
		}
	default:
		assert.Equal(t, fmt.Sprint(want), fmt.Sprint(got), path)
	}
}

func TestDecodeUID(t *testing.T) {
	web := testdata(t, "good/web.yaml")
	decode := func(data []byte, opts DecodeOptions) *corev1.Pod {
		t.Helper()
		pods, err := DecodeManifest(data, opts)
		require.NoError(t, err)
		require.Len(t, pods, 1)
		return pods[0]
	}
	base := decode(web, fileOpts("/m/web.yaml"))

	t.Run("same input, same UID (across restarts and clocks)", func(t *testing.T) {
		opts := fileOpts("/m/web.yaml")
		opts.Clock = clocktesting.NewFakePassiveClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		again := decode(web, opts)
		assert.Equal(t, base.UID, again.UID)
		assert.Equal(t, "2030-01-01T00:00:00Z", again.Annotations[podutil.ConfigFirstSeenAnnotationKey])
	})
	t.Run("spelled-out defaults do not change the UID", func(t *testing.T) {
		explicit := bytes.Replace(web, []byte("spec:\n"), []byte("spec:\n  restartPolicy: Always\n  dnsPolicy: ClusterFirst\n"), 1)
		assert.Equal(t, base.UID, decode(explicit, fileOpts("/m/web.yaml")).UID)
	})
	for name, tc := range map[string]struct {
		data []byte
		opts DecodeOptions
	}{
		"an edit":         {bytes.Replace(web, []byte("periodSeconds: 2"), []byte("periodSeconds: 3"), 1), fileOpts("/m/web.yaml")},
		"another file":    {web, fileOpts("/m/web-copy.yaml")},
		"another node":    {web, DecodeOptions{NodeName: "node-b", Source: podutil.FileSource, Location: "/m/web.yaml"}},
		"the HTTP source": {web, DecodeOptions{NodeName: "Node-A", Source: podutil.HTTPSource, Location: "/m/web.yaml"}},
	} {
		t.Run(name+" changes the UID", func(t *testing.T) {
			assert.NotEqual(t, base.UID, decode(tc.data, tc.opts).UID)
		})
	}
	t.Run("a UID in the manifest is kept", func(t *testing.T) {
		withUID := bytes.Replace(web, []byte("  name: web\n"), []byte("  name: web\n  uid: 1234-abcd\n"), 1)
		pod := decode(withUID, fileOpts("/m/web.yaml"))
		assert.EqualValues(t, "1234-abcd", pod.UID)
		assert.Equal(t, "1234-abcd", pod.Annotations[podutil.ConfigHashAnnotationKey])
	})
}

func TestDecodeDefaults(t *testing.T) {
	manifest := `
apiVersion: v1
kind: Pod
metadata: {name: d}
spec:
  hostNetwork: true
  containers:
  - name: latest
    image: example.com/app
    ports: [{containerPort: 8080}]
    env: [{name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
    resources: {limits: {cpu: "1", memory: 1Gi}}
    livenessProbe: {httpGet: {port: 8080}}
  - name: tagged
    image: example.com:5000/app:1.2
  volumes:
  - name: scratch
  - name: host
    hostPath: {path: /var/lib/x}
`
	pods, err := DecodeManifest([]byte(manifest), fileOpts("/m/d.yaml"))
	require.NoError(t, err)
	pod := pods[0]
	spec := pod.Spec
	assert.Equal(t, "default", pod.Namespace)
	assert.Equal(t, corev1.RestartPolicyAlways, spec.RestartPolicy)
	assert.Equal(t, corev1.DNSClusterFirst, spec.DNSPolicy)
	assert.Equal(t, int64(30), *spec.TerminationGracePeriodSeconds)
	assert.Equal(t, corev1.DefaultSchedulerName, spec.SchedulerName)
	assert.NotNil(t, spec.SecurityContext)
	assert.True(t, *spec.EnableServiceLinks)

	c := spec.Containers[0]
	assert.Equal(t, corev1.PullAlways, c.ImagePullPolicy)
	assert.Equal(t, corev1.PullIfNotPresent, spec.Containers[1].ImagePullPolicy)
	assert.Equal(t, corev1.TerminationMessagePathDefault, c.TerminationMessagePath)
	assert.Equal(t, corev1.TerminationMessageReadFile, c.TerminationMessagePolicy)
	assert.Equal(t, corev1.ProtocolTCP, c.Ports[0].Protocol)
	assert.Equal(t, int32(8080), c.Ports[0].HostPort, "hostNetwork: hostPort = containerPort")
	assert.Equal(t, "v1", c.Env[0].ValueFrom.FieldRef.APIVersion)
	assert.Equal(t, c.Resources.Limits, c.Resources.Requests, "requests default to limits")
	probe := c.LivenessProbe
	assert.Equal(t, []int32{1, 10, 1, 3}, []int32{probe.TimeoutSeconds, probe.PeriodSeconds, probe.SuccessThreshold, probe.FailureThreshold})
	assert.Equal(t, "/", probe.HTTPGet.Path)
	assert.Equal(t, corev1.URISchemeHTTP, probe.HTTPGet.Scheme)
	assert.NotNil(t, spec.Volumes[0].EmptyDir, "a volume without a source is an emptyDir")
	assert.Equal(t, corev1.HostPathUnset, *spec.Volumes[1].HostPath.Type)
}

// The kubelet lets file-source static pods tolerate every NoExecute taint, and leaves the
// tolerations of its URL source's pods as their manifest gives them.
func TestDecodeNoExecuteTolerationForFilesOnly(t *testing.T) {
	const manifest = "apiVersion: v1\nkind: Pod\nmetadata: {name: t}\nspec:\n  containers: [{name: c, image: i}]\n" +
		"  tolerations: [{key: k, operator: Exists, effect: NoSchedule}]\n"
	noExecute := corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	own := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

	t.Run("file", func(t *testing.T) {
		pods, err := DecodeManifest([]byte(manifest), fileOpts("/m/t.yaml"))
		require.NoError(t, err)
		assert.Equal(t, []corev1.Toleration{own, noExecute}, pods[0].Spec.Tolerations)
	})
	t.Run("HTTP", func(t *testing.T) {
		pods, err := DecodeManifest([]byte(manifest), DecodeOptions{NodeName: "Node-A", Source: podutil.HTTPSource, Location: "http://example.com/t.yaml"})
		require.NoError(t, err)
		assert.Equal(t, []corev1.Toleration{own}, pods[0].Spec.Tolerations)
	})
}

func TestDecodeRejects(t *testing.T) {
	pod := func(spec string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + spec
	}
	const c = "  containers: [{name: c, image: i}]\n"
	for _, tc := range []struct {
		name, manifest string
		class          error
		want           string
	}{
		{"no containers", pod("  restartPolicy: Always\n"), ErrInvalid, "spec.containers: Required value"},
		{"no image", pod("  containers: [{name: c}]\n"), ErrInvalid, "spec.containers[0].image: Required value"},
		{"bad restart policy", pod(c + "  restartPolicy: Sometimes\n"), ErrInvalid, "spec.restartPolicy: Unsupported value"},
		{"bad port", pod("  containers: [{name: c, image: i, ports: [{containerPort: 70000}]}]\n"), ErrInvalid, "spec.containers[0].ports[0].containerPort"},
		{"duplicate port name", pod("  containers: [{name: c, image: i, ports: [{containerPort: 1, name: a}, {containerPort: 2, name: a}]}]\n"), ErrInvalid, "spec.containers[0].ports[1].name: Duplicate"},
		{"probe without handler", pod("  containers: [{name: c, image: i, readinessProbe: {periodSeconds: 1}}]\n"), ErrInvalid, "spec.containers[0].readinessProbe: Invalid value"},
		{"probe with unknown named port", pod("  containers: [{name: c, image: i, livenessProbe: {tcpSocket: {port: web}}}]\n"), ErrInvalid, "livenessProbe.tcpSocket.port: Not found"},
		{"liveness success threshold", pod("  containers: [{name: c, image: i, livenessProbe: {exec: {command: [x]}, successThreshold: 2}}]\n"), ErrInvalid, "livenessProbe.successThreshold"},
		{"bad quantity", pod("  containers: [{name: c, image: i, resources: {limits: {cpu: lots}}}]\n"), ErrInvalid, "spec.containers[0].resources.limits[cpu]"},
		{"request above limit", pod("  containers: [{name: c, image: i, resources: {limits: {cpu: 1}, requests: {cpu: 2}}}]\n"), ErrInvalid, "spec.containers[0].resources.requests[cpu]"},
		{"mount of unknown volume", pod("  containers: [{name: c, image: i, volumeMounts: [{name: v, mountPath: /v}]}]\n"), ErrInvalid, "volumeMounts[0].name: Not found"},
		{"duplicate volume", pod(c + "  volumes: [{name: v, emptyDir: {}}, {name: v, emptyDir: {}}]\n"), ErrInvalid, "spec.volumes[1].name: Duplicate"},
		{"two volume types", pod(c + "  volumes: [{name: v, emptyDir: {}, hostPath: {path: /x}}]\n"), ErrInvalid, "more than one volume type"},
		{"unknown field", pod("  containers: [{name: c, image: i, comand: [x]}]\n"), ErrInvalid, `unknown field "spec.containers[0].comand"`},
		{"duplicate field", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, name: q}\nspec:\n" + c, ErrSyntax, "already set"},
		{"bad label", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {'a b': x}}\nspec:\n" + c, ErrInvalid, "metadata.labels"},
		{"bad name", "apiVersion: v1\nkind: Pod\nmetadata: {name: P_Q}\nspec:\n" + c, ErrInvalid, "metadata.name: Invalid value"},
		{"no kind", "apiVersion: v1\nmetadata: {name: p}\nspec:\n" + c, ErrNotAPod, `kind ""`},
		{"a list", "- a\n- b\n", ErrNotAPod, "got a list"},
		{"v2 pod", "apiVersion: v2\nkind: Pod\n", ErrNotAPod, `apiVersion "v2"`},
		{"podlist of services", `{"apiVersion":"v1","kind":"PodList","items":[{"apiVersion":"v1","kind":"Service"}]}`, ErrNotAPod, "items[0]"},
		{"same pod twice", pod(c) + "\n---\n" + pod(c), ErrDuplicateName, "document 2: metadata.name"},
		{"service account token automount", pod(c + "  automountServiceAccountToken: true\n"), ErrForbiddenReference, "spec.automountServiceAccountToken"},
		{"image pull secret", pod(c + "  imagePullSecrets: [{name: reg}]\n"), ErrForbiddenReference, "spec.imagePullSecrets[0]"},
		{"secret volume", pod(c + "  volumes: [{name: s, secret: {secretName: s}}]\n"), ErrForbiddenReference, "spec.volumes[0].secret"},
		{"pvc volume", pod(c + "  volumes: [{name: s, persistentVolumeClaim: {claimName: s}}]\n"), ErrForbiddenReference, "spec.volumes[0].persistentVolumeClaim"},
		{"csi volume", pod(c + "  volumes: [{name: s, csi: {driver: d}}]\n"), ErrForbiddenReference, "spec.volumes[0].csi"},
		{"ephemeral volume", pod(c + "  volumes: [{name: s, ephemeral: {volumeClaimTemplate: {spec: {}}}}]\n"), ErrForbiddenReference, "spec.volumes[0].ephemeral"},
		{"projected token", pod(c + "  volumes: [{name: s, projected: {sources: [{serviceAccountToken: {path: t}}]}}]\n"), ErrForbiddenReference, "spec.volumes[0].projected.sources[0].serviceAccountToken"},
		{"configmap envFrom", pod("  containers: [{name: c, image: i, envFrom: [{configMapRef: {name: m}}]}]\n"), ErrForbiddenReference, "spec.containers[0].envFrom[0].configMapRef"},
		{"configmap env in init container", pod(c + "  initContainers: [{name: i, image: i, env: [{name: X, valueFrom: {configMapKeyRef: {name: m, key: k}}}]}]\n"), ErrForbiddenReference, "spec.initContainers[0].env[0].valueFrom.configMapKeyRef"},
		{"resource claim", pod(c + "  resourceClaims: [{name: gpu, resourceClaimName: gpu}]\n"), ErrForbiddenReference, "spec.resourceClaims[0]"},
		{"ephemeral container", pod(c + "  ephemeralContainers: [{name: e, image: i}]\n"), ErrForbiddenReference, "spec.ephemeralContainers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods, err := DecodeManifest([]byte(tc.manifest), fileOpts("/m/p.yaml"))
			require.Error(t, err)
			assert.Nil(t, pods)
			assert.ErrorIs(t, err, tc.class)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "/m/p.yaml: ")
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	pod := func(spec string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n" + spec
	}
	for _, tc := range []struct {
		name, manifest string
		pods           int
	}{
		{"empty input", "", 0},
		{"only comments and separators", "# nothing\n---\n---\n", 0},
		{"default service account", pod("  serviceAccountName: default\n"), 1},
		{"no automount", pod("  automountServiceAccountToken: false\n"), 1},
		{"downward API projection", pod("  volumes: [{name: d, projected: {sources: [{downwardAPI: {items: [{path: podname, fieldRef: {fieldPath: metadata.name}}]}}]}}]\n"), 1},
		{"json pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, 1},
		{"empty pod list", `{"apiVersion":"v1","kind":"PodList","items":[]}`, 0},
		{"sidecar with probe", pod("  initContainers: [{name: s, image: i, restartPolicy: Always, startupProbe: {exec: {command: [x]}}}]\n"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods, err := DecodeManifest([]byte(tc.manifest), fileOpts("/m/p.yaml"))
			require.NoError(t, err)
			assert.Len(t, pods, tc.pods)
		})
	}
}

func TestDecodeSizeLimit(t *testing.T) {
	big := make([]byte, MaxManifestBytes+1)
	_, err := DecodeManifest(big, fileOpts("/m/big.yaml"))
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "/m/big.yaml")
}

func TestDecodeOptionsRequired(t *testing.T) {
	_, err := DecodeManifest(nil, DecodeOptions{Source: podutil.FileSource})
	assert.Error(t, err)
	_, err = DecodeManifest(nil, DecodeOptions{NodeName: "n", Source: podutil.APIServerSource})
	assert.Error(t, err)
	var de *DecodeError
	assert.False(t, errors.As(err, &de), "a programming error is not a manifest problem")
}
