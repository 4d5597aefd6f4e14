package api

import (
	"errors"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// testBackoff retries as webhookRetryBackoff does (5 attempts), without its seconds.
func testBackoff() wait.Backoff {
	return wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}
}

// errInternal, errTooMany and errForbidden are API errors as client-go returns them: the first
// two worth retrying, the last not.
var (
	errInternal  = apierrors.NewInternalError(errors.New("etcd is away"))
	errTooMany   = apierrors.NewTooManyRequests("slow down", 0)
	errForbidden = apierrors.NewForbidden(authenticationv1.Resource("tokenreviews"), "", errors.New("no"))
)

// fakeReview is a fake API server's review resource (tokenreviews, subjectaccessreviews): each
// create takes the next answer (the last one repeats), and what it asked is recorded.
type fakeReview[Spec, Status any] struct {
	mu      sync.Mutex
	answers []reviewAnswer[Status]
	asked   []Spec
}

// reviewAnswer is the status a review is answered with, or the error its create fails with.
type reviewAnswer[Status any] struct {
	status Status
	err    error
}

func (f *fakeReview[Spec, Status]) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

// client is a fake clientset whose resource is f: spec takes a created review's spec, answered
// makes the review the API server returns.
func (f *fakeReview[Spec, Status]) client(resource string, spec func(runtime.Object) Spec, answered func(Spec, Status) runtime.Object) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", resource, func(action k8stesting.Action) (bool, runtime.Object, error) {
		asked := spec(action.(k8stesting.CreateAction).GetObject())
		f.mu.Lock()
		defer f.mu.Unlock()
		answer := f.answers[min(len(f.asked), len(f.answers)-1)]
		f.asked = append(f.asked, asked)
		if answer.err != nil {
			return true, nil, answer.err
		}
		return true, answered(asked, answer.status), nil
	})
	return cs
}
