// Package deploy holds what running vk-static for real takes besides the binaries, as files to
// install: rbac.yaml (the API server's kubelet-client identity bound to the built-in
// system:kubelet-api-admin ClusterRole) and vk-static.service (the systemd unit, with
// KillMode=process so that containers outlive the agent). docs/deploy.md explains them.
//
// The files are embedded so that tests check them where they are used — the RBAC decodes into
// rbacv1 objects (here), the unit's command line parses as the agent's flags (cmd/vk-static):
//
//	args, err := deploy.ExecStart() // the unit's ExecStart, binary first
package deploy
