package podmanager

import "k8s.io/apimachinery/pkg/types"

// nameIndex maps a full name to the UIDs of the pods that carry it, most recently added last.
//
// Normally there is one UID per name. Two appear only in passing — a static pod edited (new
// UID, same full name) whose ADD arrives before the REMOVE of the old one, or a mirror's
// recreation seen before its deletion — and the index stays right in any order: the newest
// holder answers lookups, and removing it hands the name back to the older one instead of
// losing the name altogether.
type nameIndex map[string][]types.UID

// add makes uid the newest holder of name.
func (idx nameIndex) add(name string, uid types.UID) {
	idx[name] = append(without(idx[name], uid), uid)
}

// remove drops uid from name's holders.
func (idx nameIndex) remove(name string, uid types.UID) {
	rest := without(idx[name], uid)
	if len(rest) == 0 {
		delete(idx, name)
		return
	}
	idx[name] = rest
}

// current returns name's newest holder.
func (idx nameIndex) current(name string) (types.UID, bool) {
	uids := idx[name]
	if len(uids) == 0 {
		return "", false
	}
	return uids[len(uids)-1], true
}

// without returns a new slice of uids minus uid, in the same order. It never writes to the
// input, so a slice handed out earlier is never changed under its reader.
func without(uids []types.UID, uid types.UID) []types.UID {
	out := make([]types.UID, 0, len(uids)+1)
	for _, u := range uids {
		if u != uid {
			out = append(out, u)
		}
	}
	return out
}
