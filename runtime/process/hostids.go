package process

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"
	"strings"
)

// systemIDs is where the ids of ordinary accounts begin (UID_MIN and GID_MIN in Debian's,
// Ubuntu's and Fedora's /etc/login.defs): every id below it is the system's, whether or not
// /etc/passwd or /etc/group names it now — a package's account comes and goes, the files it
// owns stay. Hosts whose login.defs says otherwise still name their accounts in those files,
// which Admit reads as well.
const systemIDs = 1000

// maxID is the largest uid or gid: (uid_t)-1 means "no change" to the kernel.
const maxID = 1<<32 - 2

// IDRange is the ids from First to Last, both included.
type IDRange struct{ First, Last int64 }

// ParseIDRanges reads ids and ranges of ids such as "1000-1999", each from 1 to 4294967294
// (the values of --process-allowed-uids and --process-allowed-gids). Root is not among them:
// --process-allow-root alone admits it, so that a range such as 0-999 cannot open it by
// accident.
func ParseIDRanges(specs []string) ([]IDRange, error) {
	var out []IDRange
	for _, s := range specs {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		first, last, isRange := strings.Cut(s, "-")
		if !isRange {
			last = first
		}
		r := IDRange{}
		var errFirst, errLast error
		r.First, errFirst = strconv.ParseInt(first, 10, 64)
		r.Last, errLast = strconv.ParseInt(last, 10, 64)
		switch {
		case errFirst != nil || errLast != nil || r.First < 0 || r.Last > maxID:
			return nil, fmt.Errorf("%q is not an id from 1 to %d, nor a range of them such as 1000-1999", s, int64(maxID))
		case r.Last < r.First:
			return nil, fmt.Errorf("%q: the range ends before it begins", s)
		case r.First == 0:
			return nil, fmt.Errorf("%q: 0 is root, which only --process-allow-root allows", s)
		}
		out = append(out, r)
	}
	return out, nil
}

// inRanges reports whether one of ranges holds id.
func inRanges(ranges []IDRange, id int64) bool {
	for _, r := range ranges {
		if r.First <= id && id <= r.Last {
			return true
		}
	}
	return false
}

// hostAccounts tells the host's users and groups from their ids: found false when there is
// none. An error is a lookup that could not say (an unreadable /etc/passwd).
type hostAccounts interface {
	user(uid int64) (name string, gid int64, found bool, err error)
	group(gid int64) (name string, found bool, err error)
}

// etcAccounts reads /etc/passwd and /etc/group: os/user without cgo, as the agent is built, so
// the accounts only NSS knows (LDAP, sssd, systemd's dynamic users) are not seen.
type etcAccounts struct{}

func (etcAccounts) user(uid int64) (string, int64, bool, error) {
	u, err := user.LookupId(strconv.FormatInt(uid, 10))
	if errors.As(err, new(user.UnknownUserIdError)) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	gid, err := strconv.ParseInt(u.Gid, 10, 64)
	if err != nil {
		gid = uid
	}
	return u.Username, gid, true, nil
}

func (etcAccounts) group(gid int64) (string, bool, error) {
	g, err := user.LookupGroupId(strconv.FormatInt(gid, 10))
	if errors.As(err, new(user.UnknownGroupIdError)) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return g.Name, true, nil
}

// accounts are the host's users and groups, as the runtime sees them.
func (r *Runtime) accounts() hostAccounts {
	if r.hostAccounts != nil {
		return r.hostAccounts
	}
	return etcAccounts{}
}
