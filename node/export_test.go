package node

import "github.com/vk-static/vk-static/internal/testenv"

// ControlPlane gives the external test package (which may import provider/mock, itself an importer
// of node) the package's control plane.
func ControlPlane() *testenv.Env { return env }
