package nodecert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	certutil "k8s.io/client-go/util/cert"
)

// TestCreateFindsItsOwnRequest: a named request that exists already is taken when it is the
// same one (same key and subject: an agent restarted while it waited), refused when another
// key signed it; an unnamed request is always new.
func TestCreateFindsItsOwnRequest(t *testing.T) {
	newRequest := func(name string) request {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		subject := nodeSubject("a")
		csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
		require.NoError(t, err)
		return request{name: name, csrPEM: csrPEM, key: key, signer: certificatesv1.KubeAPIServerClientKubeletSignerName, usages: clientUsages(key)}
	}
	client := newFakeClientset()
	csrs := client.CertificatesV1().CertificateSigningRequests()
	ctx := context.Background()

	mine := newRequest("node-csr-x")
	created, err := create(ctx, csrs, mine)
	require.NoError(t, err)
	assert.Equal(t, "node-csr-x", created.Name)
	assert.Equal(t, certificatesv1.KubeAPIServerClientKubeletSignerName, created.Spec.SignerName)
	assert.Equal(t, mine.usages, created.Spec.Usages)

	again, err := create(ctx, csrs, mine)
	require.NoError(t, err, "the same request again")
	assert.Equal(t, created.Spec.Request, again.Spec.Request)

	_, err = create(ctx, csrs, newRequest("node-csr-x"))
	assert.ErrorContains(t, err, "not signed by this key")

	first, err := create(ctx, csrs, newRequest(""))
	require.NoError(t, err)
	second, err := create(ctx, csrs, newRequest(""))
	require.NoError(t, err)
	assert.NotEqual(t, first.Name, second.Name, "generated names")
	assert.Regexp(t, "^csr-", first.Name)
}
