package supervisor

import (
	"os"
	"os/user"
	"strconv"
	"strings"
)

// env is the container's environment as its processes get it: the config's, plus PATH, HOME
// and HOSTNAME when it does not set them, as CRI runtimes add them (PATH their default, HOME the
// user's home directory, else "/", HOSTNAME the pod's hostname — for a pod on the host's
// network, as every pod here is, the node's). Never the supervisor's own environment. Built
// without cgo (make build), the home directory comes from /etc/passwd, as runc reads it, not
// through NSS.
func (s *supervisor) env() []string {
	env := append([]string{}, s.rec.Config.Env...)
	var hasPath, hasHome, hasHostname bool
	for _, kv := range env {
		hasPath = hasPath || strings.HasPrefix(kv, "PATH=")
		hasHome = hasHome || strings.HasPrefix(kv, "HOME=")
		hasHostname = hasHostname || strings.HasPrefix(kv, "HOSTNAME=")
	}
	if !hasPath {
		env = append(env, "PATH="+DefaultPath)
	}
	if !hasHome {
		home := "/"
		if u, err := user.LookupId(strconv.FormatInt(s.rec.User.UID, 10)); err == nil && u.HomeDir != "" {
			home = u.HomeDir
		}
		env = append(env, "HOME="+home)
	}
	if !hasHostname {
		if name, err := os.Hostname(); err == nil {
			env = append(env, "HOSTNAME="+name)
		}
	}
	return env
}
