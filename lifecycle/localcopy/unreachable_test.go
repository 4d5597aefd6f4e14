package localcopy

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUnreachable(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{refused, true},
		{context.DeadlineExceeded, true},
		{errors.New("http2: client connection lost"), true},
		{apierrors.NewServiceUnavailable("down"), true},
		{apierrors.NewInternalError(errors.New("etcd")), true},
		{apierrors.NewTooManyRequests("later", 1), true},
		{apierrors.NewGenericServerResponse(502, "get", gr, "cfg", "", 0, false), true},
		{apierrors.NewNotFound(gr, "cfg"), false},
		{apierrors.NewForbidden(gr, "cfg", errors.New("no")), false},
		{apierrors.NewUnauthorized("who"), false},
		{apierrors.NewBadRequest("bad"), false},
		{context.Canceled, false},
	} {
		assert.Equal(t, tc.want, Unreachable(tc.err), "%v", tc.err)
	}
}
