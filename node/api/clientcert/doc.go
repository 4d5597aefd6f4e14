// Package clientcert authenticates requests by their TLS client certificate, as
// k8s.io/apiserver's x509 request authenticator: the certificate must chain to the client CA
// pool (with the intermediates the client sent) and allow client authentication; the user is
// the certificate's common name, its groups the organizations, its UID the subject's UID
// attribute (the apiserver's AllowParsingUserUIDFromCertAuth, on by default since 1.33), and
// the credential ID the certificate's SHA-256.
//
// It is that authenticator without its expiration histogram, which links
// k8s.io/component-base/metrics, its legacy registry and OpenTelemetry into the agent for a
// metric the agent never serves.
//
//	authn := clientcert.New(clientCA.VerifyOptions, clientcert.CommonNameUser)
//	resp, ok, err := authn.AuthenticateRequest(req)
package clientcert
