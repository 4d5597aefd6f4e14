package deploy

import (
	"bytes"
	_ "embed"
)

//go:embed rbac.yaml
var rbac []byte

//go:embed vk-static.service
var systemdUnit []byte

// RBAC is rbac.yaml: rbac.authorization.k8s.io/v1 objects, as `kubectl apply -f` takes them.
func RBAC() []byte { return bytes.Clone(rbac) }

// SystemdUnit is vk-static.service.
func SystemdUnit() []byte { return bytes.Clone(systemdUnit) }
