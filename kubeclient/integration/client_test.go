package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/test/support/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// contentTypes records the content type of every answer, by request path.
type contentTypes struct {
	mu    sync.Mutex
	seen  map[string]string
	inner http.RoundTripper
}

func (c *contentTypes) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.inner.RoundTrip(req)
	if err == nil {
		c.mu.Lock()
		c.seen[req.Method+" "+req.URL.Path] = resp.Header.Get("Content-Type")
		c.mu.Unlock()
	}
	return resp, err
}

// newClient is kubeclient.New over the admin's credentials, asking for protobuf as the agent
// does (cmd/vk-static/app), with every answer's content type recorded.
func newClient(t *testing.T) (kubeclient.Interface, *contentTypes) {
	t.Helper()
	cfg := rest.CopyConfig(env.AdminConfig)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	ct := &contentTypes{seen: map[string]string{}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { ct.inner = rt; return ct })
	c, err := kubeclient.New(cfg)
	require.NoError(t, err)
	return c, ct
}

func TestPodsRoundTripInProtobuf(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := env.Namespace(t)
	c, ct := newClient(t)

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kubeclient-node", Labels: map[string]string{"test": t.Name()}}}
	_, err := c.Nodes().Create(ctx, node, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	nodes, err := c.Nodes().List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", node.Name).String()})
	require.NoError(t, err)
	require.Len(t, nodes.Items, 1)
	assert.Equal(t, t.Name(), nodes.Items[0].Labels["test"])

	pods := c.Pods(ns)
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node.Name})
	require.NoError(t, err)
	defer w.Stop()

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Image: "img"}},
			TerminationGracePeriodSeconds: ptr.To[int64](0)},
	}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := pods.Get(ctx, "p", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.UID, got.UID)
	assert.NotEmpty(t, got.ManagedFields, "a get keeps managedFields")

	patch := `{"status":{"phase":"Running","podIP":"10.0.0.7","podIPs":[{"ip":"10.0.0.7"}]}}`
	patched, err := pods.Patch(ctx, "p", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	require.NoError(t, err)
	assert.Equal(t, corev1.PodRunning, patched.Status.Phase)

	// The same patch through the core REST client, as node's status writer sends it.
	rc, ok := c.CoreRESTClient().(*rest.RESTClient)
	require.True(t, ok, "CoreRESTClient is %T", c.CoreRESTClient())
	require.NoError(t, rc.Patch(types.StrategicMergePatchType).Namespace(ns).Resource("pods").Name("p").
		SubResource("status").Body([]byte(`{"status":{"message":"through the REST client"}}`)).Do(ctx).Error())

	var events []watch.EventType
	for len(events) < 3 {
		select {
		case ev := <-w.ResultChan():
			p, ok := ev.Object.(*corev1.Pod)
			require.True(t, ok, "watch event %s of %T", ev.Type, ev.Object)
			assert.Equal(t, created.UID, p.UID)
			assert.Nil(t, p.ManagedFields, "a watched pod comes without managedFields")
			events = append(events, ev.Type)
			if len(events) == 3 {
				assert.Equal(t, "through the REST client", p.Status.Message)
			}
		case <-ctx.Done():
			t.Fatalf("watch: %v after %v", ctx.Err(), events)
		}
	}
	assert.Equal(t, []watch.EventType{watch.Added, watch.Modified, watch.Modified}, events)

	list, err := pods.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	require.NoError(t, pods.Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))

	assertProtobuf(t, ct, 7)
}

func TestOtherResourcesRoundTripInProtobuf(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := env.Namespace(t)
	c, ct := newClient(t)

	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("kubeclient"), LeaseDurationSeconds: ptr.To[int32](40)}}
	_, err := c.Leases(ns).Create(ctx, lease, metav1.CreateOptions{})
	require.NoError(t, err)
	gotLease, err := c.Leases(ns).Get(ctx, "l", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "kubeclient", *gotLease.Spec.HolderIdentity)

	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p"},
		Reason: "Tested", Type: corev1.EventTypeNormal}
	_, err = c.Events(ns).Create(ctx, ev, metav1.CreateOptions{})
	require.NoError(t, err)

	cm, err := c.ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotEmpty(t, cm.Data["ca.crt"])
	_, err = c.Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"k": []byte("v")}}, metav1.CreateOptions{})
	require.NoError(t, err)
	secret, err := c.Secrets(ns).Get(ctx, "s", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "v", string(secret.Data["k"]))
	services, err := c.Services(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.NotEmpty(t, services.Items) // the kubernetes Service

	token, err := c.ServiceAccounts(ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, token.Status.Token)

	review, err := c.TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token.Status.Token}}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.True(t, review.Status.Authenticated, "token review: %+v", review.Status)
	assert.Equal(t, "system:serviceaccount:"+ns+":default", review.Status.User.Username)

	sar, err := c.SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "nobody",
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: ns}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.False(t, sar.Status.Allowed)

	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{GenerateName: "kubeclient-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t), SignerName: certificatesv1.KubeletServingSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}}}
	created, err := c.CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.CertificateSigningRequests().Delete(context.Background(), created.Name, metav1.DeleteOptions{})
	})
	gotCSR, err := c.CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.UID, gotCSR.UID)

	assertProtobuf(t, ct, 11)
}

// assertProtobuf checks that at least n answers came and every one was protobuf.
func assertProtobuf(t *testing.T, ct *contentTypes, n int) {
	t.Helper()
	ct.mu.Lock()
	defer ct.mu.Unlock()
	assert.GreaterOrEqual(t, len(ct.seen), n, "answers: %v", ct.seen)
	for req, typ := range ct.seen {
		assert.True(t, strings.HasPrefix(typ, "application/vnd.kubernetes.protobuf"), "%s answered in %q", req, typ)
	}
}

// csrPEM is a certificate request for a node's serving certificate.
func csrPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:kubeclient-node", Organization: []string{"system:nodes"}}}, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
