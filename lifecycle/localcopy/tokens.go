package localcopy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/nodeobjects"
)

// Tokens is the TokenRequester of the pods' projected service-account tokens: each token the
// API server issues for a pod (req.Spec.BoundObjectRef names it) is kept until it expires, and
// served again for the same request while the API server cannot be reached. A request bound
// to no pod is passed on as it is. Nil when the Store has no TokenRequester.
func (s *Store) Tokens() nodeobjects.TokenRequester {
	if s.cfg.Tokens == nil {
		return nil
	}
	return tokens{s: s}
}

type tokens struct{ s *Store }

func (t tokens) RequestToken(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	tr, err := t.s.cfg.Tokens.RequestToken(ctx, namespace, serviceAccount, req)
	ref := req.Spec.BoundObjectRef
	if ref == nil || ref.Kind != "Pod" || ref.UID == "" {
		return tr, err
	}
	uid, file := ref.UID, tokenFile(namespace, serviceAccount, req)
	logger := klog.FromContext(ctx).WithValues("podUID", uid, "serviceAccount", serviceAccount)
	switch {
	case err == nil && tr != nil && tr.Status.Token != "":
		if err := t.s.keep(uid, file, tr); err != nil {
			logger.Error(err, "Could not keep the node's copy of the pod's service account token")
		}
		return tr, nil
	case err == nil:
		return tr, err
	case apierrors.IsNotFound(err):
		// The service account (or the pod) is gone: its token must not come back.
		if err := t.s.drop(uid, file); err != nil {
			logger.Error(err, "Could not remove the node's copy of a service account token")
		}
		return tr, err
	case !Unreachable(err) || ctx.Err() != nil:
		return tr, err
	}
	var kept authenticationv1.TokenRequest
	ok, lerr := t.s.load(uid, file, &kept)
	if lerr != nil {
		logger.Error(lerr, "Could not read the node's copy of the pod's service account token")
	}
	if !ok {
		return tr, err
	}
	if !t.s.cfg.Clock.Now().Before(kept.Status.ExpirationTimestamp.Time) {
		// Expired: of no use to anyone, and not kept.
		if err := t.s.drop(uid, file); err != nil {
			logger.Error(err, "Could not remove the node's copy of an expired service account token")
		}
		return tr, err
	}
	logger.V(2).Info("The API server cannot be reached: using the node's copy of the pod's service account token",
		"expires", kept.Status.ExpirationTimestamp, "err", err)
	return &kept, nil
}

// tokenFile names the copy of the token for one request of a pod: its service account,
// audiences and expiration, as the kubelet's token manager keys its cache (the pod is the
// directory).
func tokenFile(namespace, serviceAccount string, req *authenticationv1.TokenRequest) string {
	key, _ := json.Marshal(struct {
		Namespace, ServiceAccount string
		Audiences                 []string
		ExpirationSeconds         *int64
		Pod                       types.UID
	}{namespace, serviceAccount, req.Spec.Audiences, req.Spec.ExpirationSeconds, req.Spec.BoundObjectRef.UID})
	sum := sha256.Sum256(key)
	return "token-" + hex.EncodeToString(sum[:8]) + ".json"
}
