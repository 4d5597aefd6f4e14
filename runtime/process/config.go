package process

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"

	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/lifecycle"
)

// Config configures a Runtime.
type Config struct {
	// StateDir holds the runtime's records (<root-dir>/process): sandboxes/<id>/sandbox.json and
	// containers/<id>/{config.json,state.json,sock}. It survives agent restarts. One Runtime
	// uses it at a time (runtime.lock, flocked).
	StateDir string
	// DefaultUser runs the containers of API pods whose config names no user: a user name or
	// uid[:gid]. Empty is "nobody". A static pod that names no user runs as root (Admit). Without
	// root, containers always run as the agent's own user.
	DefaultUser string
	// AllowRoot admits API pods whose containers would run as uid 0 or with group 0 (static
	// pods may).
	AllowRoot bool
	// AllowedUIDs and AllowedGIDs are the host's ids API pods may run with: the ids below 1000
	// and those /etc/passwd and /etc/group name are refused otherwise, except the DefaultUser's
	// (Admit). Ids from 1000 up that the host does not name need not be listed.
	AllowedUIDs, AllowedGIDs []IDRange
	// AllowHostNamespaces admits untrusted pods (API pods, and static pods under
	// RestrictStaticPods) that ask for hostPID or hostIPC (--process-allow-host-namespaces):
	// the host's processes, their command lines and environments, and its shared memory.
	AllowHostNamespaces bool
	// CNI is the node's pod network, on which each restricted pod that does not ask for
	// hostNetwork gets a network namespace of its own; nil is none.
	CNI *CNI
	// AllowHostNetwork admits untrusted pods that ask for hostNetwork
	// (--process-allow-host-network), and runs those that do not on the host's network too
	// when the node has no pod network; without it they wait until it has one, as on a
	// kubelet's node without a network.
	AllowHostNetwork bool
	// RestrictStaticPods holds static pods (file and HTTP sources) to the rules of API pods:
	// DefaultUser, AllowRoot, AllowedUIDs and AllowedGIDs. By default they run as their
	// manifest says, as the kubelet runs them: the manifest directory and URL are the node
	// administrator's.
	RestrictStaticPods bool
	// MaskedPaths are host paths that restricted pods (API pods, and static pods under
	// RestrictStaticPods) see as empty: the agent's root directory, its credentials, other node
	// agents' state. StateDir is always among them.
	MaskedPaths []string
	// LogMaxSize and LogMaxFiles rotate container logs (containerlog.WriterOptions); zero is
	// containerlog's default.
	LogMaxSize  int64
	LogMaxFiles int
	// NodeIPs are the node's addresses; processes share the host's network.
	NodeIPs []string
	// Clock times the runtime's records and its grace periods; nil is the real clock.
	Clock clock.Clock
	// Cgroups puts pods and containers in the kubelet's cgroup hierarchy, their limits
	// enforced; nil runs them without cgroups (CgroupsUnavailable says so).
	Cgroups *Cgroups
	// SupervisorPath is the vk-static-supervisor binary (cmd/vk-static-supervisor) that
	// supervises each container. Empty re-executes the agent's own binary, which must then call
	// RunSupervisorIfRequested first thing in main: that works, but every supervisor then pays the
	// agent's package initialisation (megabytes of memory, tens of milliseconds of CPU).
	SupervisorPath string
}

// CNI is where the node's CNI configuration and plugins are (--cni-conf-dir, --cni-bin-dir,
// --cni-cache-dir): the first network configuration in ConfDir by file name is the pods'.
type CNI struct {
	ConfDir  string
	BinDirs  []string
	CacheDir string
}

// defaultUserName is who runs a container when neither its config nor Config.DefaultUser says.
const defaultUserName = "nobody"

// nobodyID is the uid and gid of "nobody" on systems without such an entry in /etc/passwd.
const nobodyID = 65534

// resolveUser turns a user name or "uid[:gid]" into ids: a name through os/user (with its
// supplementary groups), a number as it is (gid defaults to the uid's primary group if it has
// an entry, else to the uid).
func resolveUser(spec string) (*lifecycle.User, error) {
	if spec == "" {
		spec = defaultUserName
	}
	name, group, hasGroup := strings.Cut(spec, ":")
	u := &lifecycle.User{}
	if uid, err := strconv.ParseInt(name, 10, 64); err == nil {
		u.UID, u.GID = uid, uid
		if entry, err := user.LookupId(name); err == nil {
			if gid, err := strconv.ParseInt(entry.Gid, 10, 64); err == nil {
				u.GID = gid
			}
		}
	} else {
		entry, err := user.Lookup(name)
		switch {
		case err == nil:
			if u.UID, err = strconv.ParseInt(entry.Uid, 10, 64); err != nil {
				return nil, fmt.Errorf("user %q: uid %q: %w", name, entry.Uid, err)
			}
			if u.GID, err = strconv.ParseInt(entry.Gid, 10, 64); err != nil {
				return nil, fmt.Errorf("user %q: gid %q: %w", name, entry.Gid, err)
			}
			if groups, err := entry.GroupIds(); err == nil {
				for _, g := range groups {
					if gid, err := strconv.ParseInt(g, 10, 64); err == nil && gid != u.GID {
						u.SupplementalGroups = append(u.SupplementalGroups, gid)
					}
				}
			}
		case name == defaultUserName:
			// A minimal image without /etc/passwd still has the conventional nobody.
			u.UID, u.GID = nobodyID, nobodyID
		default:
			return nil, fmt.Errorf("user %q: %w", name, err)
		}
	}
	if hasGroup {
		gid, err := strconv.ParseInt(group, 10, 64)
		if err != nil {
			g, lerr := user.LookupGroup(group)
			if lerr != nil {
				return nil, fmt.Errorf("group %q: %w", group, lerr)
			}
			if gid, err = strconv.ParseInt(g.Gid, 10, 64); err != nil {
				return nil, fmt.Errorf("group %q: gid %q: %w", group, g.Gid, err)
			}
		}
		u.GID = gid
		u.SupplementalGroups = nil
	}
	if u.UID < 0 || u.GID < 0 {
		return nil, errors.New("user " + spec + ": negative id")
	}
	return u, nil
}

// agentUser is the agent's own identity: what every container runs as when the agent is not
// root (a user namespace maps only that one id).
func agentUser() *lifecycle.User {
	return &lifecycle.User{UID: int64(os.Getuid()), GID: int64(os.Getgid())}
}
