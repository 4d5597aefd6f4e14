package env

import (
	"context"

	"github.com/vk-static/vk-static/nodeobjects"
)

// Object kinds as they read in errors and SkippedKeys.
const (
	kindConfigMap = "configMap"
	kindSecret    = "secret"
)

// objectCache reads each config map and secret of one Build once, like the kubelet's
// makeEnvironmentVariables, so that an object referenced by several variables is seen in one
// state and read once.
type objectCache struct {
	getter    nodeobjects.ObjectGetter
	namespace string
	read      map[objectKey]objectRead
}

type objectKey struct{ kind, name string }

type objectRead struct {
	data map[string]string
	err  error
}

func newObjectCache(getter nodeobjects.ObjectGetter, namespace string) *objectCache {
	return &objectCache{getter: getter, namespace: namespace, read: make(map[objectKey]objectRead)}
}

// data returns the key/value pairs of the config map or secret (secret values as strings);
// errors are the getter's, or ErrNoObjectGetter.
func (o *objectCache) data(ctx context.Context, kind, name string) (map[string]string, error) {
	key := objectKey{kind, name}
	if r, ok := o.read[key]; ok {
		return r.data, r.err
	}
	var r objectRead
	switch {
	case o.getter == nil:
		r.err = ErrNoObjectGetter
	case kind == kindConfigMap:
		cm, err := o.getter.GetConfigMap(ctx, o.namespace, name)
		if err != nil {
			r.err = err
		} else {
			r.data = cm.Data
		}
	default:
		s, err := o.getter.GetSecret(ctx, o.namespace, name)
		if err != nil {
			r.err = err
		} else {
			r.data = make(map[string]string, len(s.Data))
			for k, v := range s.Data {
				r.data[k] = string(v)
			}
		}
	}
	o.read[key] = r
	return r.data, r.err
}
