package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/provider"
)

// containerLogs serves /containerLogs/{namespace}/{pod}/{container}, what the API server
// proxies for pods/log (kubectl logs). The pod is named as the API server knows it: a static
// pod's mirror has the static pod's name, so the pod manager's regular pod of that name is the
// one the provider runs, whichever kind it is.
func (rt Routes) containerLogs(w http.ResponseWriter, r *http.Request) {
	namespace, podName, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	if msg := validatePodPath(namespace, podName, container); msg != "" {
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	q, err := parseLogQuery(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	logs, ok := capability[provider.ContainerLogsHandler](w, rt.Provider)
	if !ok {
		return
	}
	pod, ok := rt.Pods.GetPodByName(namespace, podName)
	if !ok {
		http.Error(w, fmt.Sprintf("pod %q does not exist", podName), http.StatusNotFound)
		return
	}
	if !hasContainer(pod, container) {
		http.Error(w, fmt.Sprintf("container %q not found in pod %q", container, podName), http.StatusNotFound)
		return
	}

	ctx := r.Context()
	var skip int64 // bytes of the log as it is now, left out for tailLines=0 with follow
	if q.noLines {
		if !q.opts.Follow {
			// Nothing to show, but the container exists: the kubelet answers an empty 200.
			if err := probeLogs(ctx, logs, pod, container, q.opts); err != nil {
				writeLogsError(w, r, err)
			}
			return
		}
		// "No lines, then the new ones": ContainerLogOpts.Tail cannot say it, so the log as it
		// is now is measured and that many bytes of the followed stream are left out. The log
		// only grows, so what is left out is exactly what existed when it was measured.
		if skip, err = measureLogs(ctx, logs, pod, container, q.opts); err != nil {
			writeLogsError(w, r, err)
			return
		}
	}
	opts := q.opts
	limit := opts.LimitBytes
	if skip > 0 {
		opts.LimitBytes = 0 // applied after what is skipped
	}
	rc, err := logs.GetContainerLogs(ctx, pod.Namespace, pod.Name, container, opts)
	if err != nil {
		writeLogsError(w, r, err)
		return
	}
	defer rc.Close()
	var src io.Reader = rc
	if skip > 0 {
		if _, err := io.CopyN(io.Discard, rc, skip); err != nil {
			// Ended before the old part did (the container ended): nothing new.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			return
		}
		if limit > 0 {
			src = io.LimitReader(rc, limit)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fw := &flushWriter{w: w, rc: http.NewResponseController(w)}
	fw.flush() // the client sees the answer start before the first line, which may be long
	if _, err := io.Copy(fw, src); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		// Too late for a status: the stream just ends.
		klog.FromContext(ctx).V(3).Info("Container log stream ended early", "pod", klog.KObj(pod), "container", container, "err", err)
	}
}

// probeLogs asks for the log (and closes it at once), so that a pod or container the provider
// does not know is its answer even when nothing is to be read.
func probeLogs(ctx context.Context, logs provider.ContainerLogsHandler, pod *corev1.Pod, container string, opts provider.ContainerLogOpts) error {
	opts.Follow = false
	rc, err := logs.GetContainerLogs(ctx, pod.Namespace, pod.Name, container, opts)
	if err != nil {
		return err
	}
	return rc.Close()
}

// measureLogs is the size in bytes of the log as it is now, shaped like opts without a limit.
func measureLogs(ctx context.Context, logs provider.ContainerLogsHandler, pod *corev1.Pod, container string, opts provider.ContainerLogOpts) (int64, error) {
	opts.Follow, opts.LimitBytes = false, 0
	rc, err := logs.GetContainerLogs(ctx, pod.Namespace, pod.Name, container, opts)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.Copy(io.Discard, rc)
}

// writeLogsError answers the provider's error for a container's logs as the kubelet does: the
// pod and the container are known by then, so what was not found (a previous instance, a
// container that has not started) is 400 with its message. The API server shows a 400's message
// to kubectl ("Error from server (BadRequest): previous terminated container ..."), where a
// 404's is replaced by "the server could not find the requested resource".
func writeLogsError(w http.ResponseWriter, r *http.Request, err error) {
	if provider.IsNotFound(err) {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeProviderError(w, r, err)
}

// writeProviderError answers a provider's error before anything was written: NotFound 404,
// InvalidInput 400, anything else 500 (the provider failed).
func writeProviderError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case provider.IsNotFound(err):
		http.Error(w, err.Error(), http.StatusNotFound)
	case provider.IsInvalidInput(err):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case provider.IsNotImplemented(err):
		http.Error(w, err.Error(), http.StatusNotImplemented)
	default:
		klog.FromContext(r.Context()).Error(err, "Provider request failed", "path", r.URL.Path)
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// hasContainer reports whether pod has a container (regular, init or ephemeral) of that name.
func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// validatePodPath checks the names in a route's path as the API server validates the objects'
// names (a namespace and a container are DNS-1123 labels, a pod a subdomain), so that nothing
// else — an escaped '/', "..", an empty name — reaches the pod manager or the provider, which
// may use them in file paths. It returns what is wrong, or "".
func validatePodPath(namespace, pod, container string) string {
	check := func(what, v string, errs []string) string {
		if len(errs) == 0 {
			return ""
		}
		return fmt.Sprintf("invalid %s name %q: %s", what, v, strings.Join(errs, "; "))
	}
	if msg := check("namespace", namespace, validation.IsDNS1123Label(namespace)); msg != "" {
		return msg
	}
	if msg := check("pod", pod, validation.IsDNS1123Subdomain(pod)); msg != "" {
		return msg
	}
	if container == "" { // only when a route has no container
		return ""
	}
	return check("container", container, validation.IsDNS1123Label(container))
}

// logQuery is a parsed log request: the provider's options, and whether the kubelet's
// tailLines=0 (no lines) was asked, which the options cannot say.
type logQuery struct {
	opts    provider.ContainerLogOpts
	noLines bool
}

// parseLogQuery reads the kubelet's query parameters (v1.PodLogOptions') and validates them as
// the kubelet does (ValidatePodLogOptions). A bad value is an error naming the parameter; the
// kubelet answers it 422 "Invalid request.", this one 400 with the reason. Unknown parameters are
// ignored, as the kubelet's decoder ignores them.
func parseLogQuery(q url.Values) (logQuery, error) {
	var lq logQuery
	// The kubelet still takes the old "tail" parameter; "all" is the same as none.
	if tail := q.Get("tail"); tail != "" {
		q = cloneValues(q)
		q.Del("tailLines")
		if tail != "all" {
			q.Set("tailLines", tail)
		}
	}
	var err error
	if lq.opts.Follow, err = boolParam(q, "follow"); err != nil {
		return lq, err
	}
	if lq.opts.Previous, err = boolParam(q, "previous"); err != nil {
		return lq, err
	}
	if lq.opts.Timestamps, err = boolParam(q, "timestamps"); err != nil {
		return lq, err
	}
	if v, ok, err := intParam(q, "tailLines"); err != nil {
		return lq, err
	} else if ok {
		if v < 0 {
			return lq, fmt.Errorf("tailLines: Invalid value: %d: must be greater than or equal to 0", v)
		}
		lq.noLines = v == 0
		lq.opts.Tail = int(min(v, int64(maxInt)))
	}
	if v, ok, err := intParam(q, "limitBytes"); err != nil {
		return lq, err
	} else if ok {
		if v < 1 {
			return lq, fmt.Errorf("limitBytes: Invalid value: %d: must be greater than 0", v)
		}
		lq.opts.LimitBytes = v
	}
	secs, hasSecs, err := intParam(q, "sinceSeconds")
	if err != nil {
		return lq, err
	}
	sinceTime, hasTime := q.Get("sinceTime"), q.Has("sinceTime")
	if hasSecs && hasTime {
		return lq, errors.New("sinceSeconds, sinceTime: at most one of `sinceTime` or `sinceSeconds` may be specified")
	}
	if hasSecs {
		if secs < 1 {
			return lq, fmt.Errorf("sinceSeconds: Invalid value: %d: must be greater than 0", secs)
		}
		// Capped at what a time.Duration holds (about 292 years): providers compute the bound as
		// now - SinceSeconds*time.Second, which a larger value overflows into a time in the future,
		// so that sinceSeconds=9223372036854775807 showed nothing instead of the whole log.
		lq.opts.SinceSeconds = int(min(secs, maxSinceSeconds))
	}
	if hasTime && sinceTime != "" {
		t, err := time.Parse(time.RFC3339, sinceTime)
		if err != nil {
			return lq, fmt.Errorf("sinceTime: Invalid value: %q: not an RFC 3339 time", sinceTime)
		}
		lq.opts.SinceTime = t
	}
	return lq, nil
}

const maxInt = int(^uint(0) >> 1)

// maxSinceSeconds is the largest sinceSeconds passed on: the most whole seconds a time.Duration
// holds.
const maxSinceSeconds = int64(math.MaxInt64 / time.Second)

// boolParam is a boolean query parameter: absent or empty is false, and a parameter given
// without a value ("?follow") true, as the kubelet's decoder reads them.
func boolParam(q url.Values, name string) (bool, error) {
	vs, ok := q[name]
	if !ok || len(vs) == 0 {
		return false, nil
	}
	if vs[0] == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(vs[0])
	if err != nil {
		return false, fmt.Errorf("%s: Invalid value: %q: not a boolean", name, vs[0])
	}
	return b, nil
}

// intParam is an integer query parameter, and whether it was given (an empty value is not).
func intParam(q url.Values, name string) (int64, bool, error) {
	s := q.Get(name)
	if s == "" {
		return 0, false, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: Invalid value: %q: not an integer", name, s)
	}
	return v, true, nil
}

func cloneValues(q url.Values) url.Values {
	c := make(url.Values, len(q))
	for k, v := range q {
		c[k] = append([]string(nil), v...)
	}
	return c
}

// flushWriter sends every write to the client at once, so that a followed log shows each line
// as it comes instead of when a buffer fills.
type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f *flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil {
		return n, err
	}
	return n, f.flush()
}

func (f *flushWriter) flush() error {
	if err := f.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
