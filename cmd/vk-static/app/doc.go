// Package app is the vk-static command, importable (the kubelet's cmd/kubelet/app): its flags
// and config file, their validation, and their turning into an agent.Config with a provider
// chosen by --provider; the healthz server and memory limit that belong to the process; and the
// subcommands. cmd/vk-static is only the process around Run.
//
// The subcommands:
//
//	vk-static [flags]                 run the agent
//	vk-static validate FILE|DIR...    check manifests as the agent would, one line per problem
//	vk-static pods                    list the pods a running agent runs
//	vk-static logs POD [-c C] [-f]    print a container's log
//	vk-static version                 print the version
package app
