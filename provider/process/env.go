package process

import (
	"os/user"
	"strconv"
	"strings"
)

// env is the container's environment as its processes get it: the config's, plus PATH and HOME
// when it sets neither, as CRI runtimes add them (PATH their default, HOME the user's home
// directory, else "/"). Never the supervisor's own environment.
func (s *supervisor) env() []string {
	env := append([]string{}, s.rec.Config.Env...)
	var hasPath, hasHome bool
	for _, kv := range env {
		hasPath = hasPath || strings.HasPrefix(kv, "PATH=")
		hasHome = hasHome || strings.HasPrefix(kv, "HOME=")
	}
	if !hasPath {
		env = append(env, "PATH="+defaultPath)
	}
	if !hasHome {
		home := "/"
		if u, err := user.LookupId(strconv.FormatInt(s.rec.User.UID, 10)); err == nil && u.HomeDir != "" {
			home = u.HomeDir
		}
		env = append(env, "HOME="+home)
	}
	return env
}
