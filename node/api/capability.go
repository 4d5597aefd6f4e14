package api

import (
	"net/http"

	"github.com/vk-static/vk-static/provider"
)

// capability is the provider's T, or false after answering 501 with the message naming the
// capability it lacks.
func capability[T any](w http.ResponseWriter, p any) (T, bool) {
	c, err := provider.Capability[T](p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotImplemented)
		return c, false
	}
	return c, true
}
