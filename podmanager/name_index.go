package podmanager

// nameIndex maps a full name to the UIDs of the pods that carry it, most recently added last.
// It is indexed by one UID kind: regular pods and mirror pods have an index each, so a lookup
// in one never answers with a UID of the other.
//
// Normally there is one UID per name. Two appear only in passing — a static pod edited (new
// UID, same full name) whose ADD arrives before the REMOVE of the old one, or a mirror's
// recreation seen before its deletion — and the index stays right in any order: the newest
// holder answers lookups, and removing it hands the name back to the older one instead of
// losing the name altogether.
type nameIndex[U ResolvedPodUID | MirrorPodUID] map[string][]U

// add makes uid the newest holder of name.
func (idx nameIndex[U]) add(name string, uid U) {
	idx[name] = append(without(idx[name], uid), uid)
}

// remove drops uid from name's holders.
func (idx nameIndex[U]) remove(name string, uid U) {
	rest := without(idx[name], uid)
	if len(rest) == 0 {
		delete(idx, name)
		return
	}
	idx[name] = rest
}

// current returns name's newest holder.
func (idx nameIndex[U]) current(name string) (U, bool) {
	uids := idx[name]
	if len(uids) == 0 {
		return "", false
	}
	return uids[len(uids)-1], true
}

// without returns a new slice of uids minus uid, in the same order. It never writes to the
// input, so a slice handed out earlier is never changed under its reader.
func without[U ResolvedPodUID | MirrorPodUID](uids []U, uid U) []U {
	out := make([]U, 0, len(uids)+1)
	for _, u := range uids {
		if u != uid {
			out = append(out, u)
		}
	}
	return out
}
