package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	podenv "github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/lifecycle/volume"
	"github.com/vk-static/vk-static/nodeobjects"
)

// tokenClaims are the claims of a bound service account token this test reads.
type tokenClaims struct {
	Subject    string   `json:"sub"`
	Audience   []string `json:"aud"`
	Kubernetes struct {
		Namespace string `json:"namespace"`
		Pod       struct {
			Name string    `json:"name"`
			UID  types.UID `json:"uid"`
		} `json:"pod"`
		ServiceAccount struct {
			Name string `json:"name"`
		} `json:"serviceaccount"`
		Node struct {
			Name string `json:"name"`
		} `json:"node"`
	} `json:"kubernetes.io"`
}

// TestKubeAPIAccessVolume sets up, as node-a, the kube-api-access-* volume the ServiceAccount
// admission gives an ordinary pod bound to node-a: a token bound to the pod, the cluster CA
// (kube-root-ca.crt) and the namespace.
func TestKubeAPIAccessVolume(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	const nodeName = "node-a"
	pod, err := env.Admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api"},
		Spec: corev1.PodSpec{
			NodeName:   nodeName,
			Containers: []corev1.Container{{Name: "app", Image: "busybox"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Len(t, pod.Spec.Volumes, 1, "the ServiceAccount admission adds the kube-api-access volume")
	access := pod.Spec.Volumes[0]
	require.True(t, strings.HasPrefix(access.Name, "kube-api-access-"), access.Name)
	require.NotNil(t, access.Projected)

	node := env.NodeClient(t, nodeName)
	m, err := volume.New(volume.Config{
		PodsDir: filepath.Join(t.TempDir(), "pods"),
		Objects: nodeobjects.NewClientGetter(kubeclienttest.Wrap(node)),
		Tokens:  nodeobjects.NewClientTokenRequester(kubeclienttest.Wrap(node)),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Teardown(ctx, pod.UID) })

	// The Node authorizer learns that the pod is bound to node-a from its informers: until it
	// does, the node may not read kube-root-ca.crt nor request the token. A kubelet retries
	// (FailedMount), and so does this.
	var vols volume.Volumes
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var err error
		vols, _, err = m.Setup(ctx, pod, podenv.PodFacts{}, nil)
		assert.NoError(c, err)
	}, 30*time.Second, 100*time.Millisecond, "node %s sets up the pod's volumes", nodeName)

	dir := vols[access.Name]
	require.NotEmpty(t, dir)
	assert.Equal(t, string(env.CAData), readFile(t, filepath.Join(dir, "ca.crt")))
	assert.Equal(t, ns, readFile(t, filepath.Join(dir, "namespace")))

	token := readFile(t, filepath.Join(dir, "token"))
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3, "a JWT: header.claims.signature")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var claims tokenClaims
	require.NoError(t, json.Unmarshal(raw, &claims), "%s", raw)
	assert.Equal(t, "system:serviceaccount:"+ns+":default", claims.Subject)
	assert.Equal(t, []string{"https://kubernetes.default.svc"}, claims.Audience, "no audience asked: the API server's")
	assert.Equal(t, ns, claims.Kubernetes.Namespace)
	assert.Equal(t, "api", claims.Kubernetes.Pod.Name)
	assert.Equal(t, pod.UID, claims.Kubernetes.Pod.UID)
	assert.Equal(t, "default", claims.Kubernetes.ServiceAccount.Name)
	assert.Equal(t, nodeName, claims.Kubernetes.Node.Name)

	// The API server takes the token as the pod's service account.
	review, err := env.Admin.AuthenticationV1().TokenReviews().Create(ctx,
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.True(t, review.Status.Authenticated, "token review: %s", review.Status.Error)
	assert.Equal(t, "system:serviceaccount:"+ns+":default", review.Status.User.Username)

	// A fresh token is not requested again: the periodic Refresh leaves the volume alone.
	changed, err := m.Refresh(ctx, pod, podenv.PodFacts{}, nil)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, token, readFile(t, filepath.Join(dir, "token")))
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
