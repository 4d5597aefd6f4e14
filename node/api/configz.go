package api

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// configzName is the key the kubelet registers its configuration under in /configz
// (cmd/kubelet/app/server.go: configz.New("kubeletconfig")).
const configzName = "kubeletconfig"

// configzHandler serves GET /configz as the kubelet does (k8s.io/component-base/configz): one
// JSON object holding the configuration under "kubeletconfig". The configuration is fixed for
// the server's life, so it is encoded once, and a value that cannot be encoded fails New
// rather than every request.
func configzHandler(config any) (http.Handler, error) {
	body, err := json.Marshal(map[string]any{configzName: config})
	if err != nil {
		return nil, fmt.Errorf("api: Config.Configz: %w", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(body)
	}), nil
}
