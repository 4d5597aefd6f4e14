package watchstore

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// NewListWatch lists and watches through a typed client's List and Watch (so that it works with
// the fake clientset too, which has no REST client), narrowed by fieldSelector. client is the
// clientset list and watch belong to: one that cannot stream the initial list as a watch (the
// fake) is never asked to.
func NewListWatch[T runtime.Object](client any, fieldSelector string,
	list func(context.Context, metav1.ListOptions) (T, error),
	watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error),
) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = fieldSelector
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = fieldSelector
			return watchFunc(ctx, o)
		},
	}, client)
}
