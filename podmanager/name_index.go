package podmanager

import "slices"

// nameIndex maps a full name to the UIDs of the pods that carry it, most recently added last.
// It is indexed by one UID kind: regular pods and mirror pods have an index each, so a lookup
// in one never answers with a UID of the other.
//
// Normally there is one UID per name. Two appear only in passing — a static pod edited (new
// UID, same full name) whose ADD arrives before the REMOVE of the old one, or a mirror's
// recreation seen before its deletion — and the index stays right in any order: the newest
// holder answers lookups, and removing it hands the name back to the older one instead of
// losing the name altogether.
//
// The newest holder is a map value of its own and the older ones are in a second map, empty
// but for those moments: a list of holders per name was a 16 B slice more for every pod (about
// 24 B a pod with the map's larger values, docs/performance.md "Live heap per pod").
type nameIndex[U ResolvedPodUID | MirrorPodUID] struct {
	newest map[string]U
	older  map[string][]U // oldest first; a name is here only while it has more than one holder
}

func newNameIndex[U ResolvedPodUID | MirrorPodUID]() nameIndex[U] {
	return nameIndex[U]{newest: map[string]U{}, older: map[string][]U{}}
}

// add makes uid the newest holder of name.
func (idx nameIndex[U]) add(name string, uid U) {
	cur, ok := idx.newest[name]
	if ok && cur == uid {
		return
	}
	if ok {
		idx.older[name] = append(without(idx.older[name], uid), cur)
	}
	idx.newest[name] = uid
}

// remove drops uid from name's holders.
func (idx nameIndex[U]) remove(name string, uid U) {
	cur, ok := idx.newest[name]
	if !ok {
		return
	}
	older := idx.older[name]
	if cur != uid {
		idx.setOlder(name, without(older, uid))
		return
	}
	if len(older) == 0 {
		delete(idx.newest, name)
		return
	}
	idx.newest[name] = older[len(older)-1]
	idx.setOlder(name, slices.Clone(older[:len(older)-1])) // a new slice: never write to one handed out
}

func (idx nameIndex[U]) setOlder(name string, uids []U) {
	if len(uids) == 0 {
		delete(idx.older, name)
		return
	}
	idx.older[name] = uids
}

// current returns name's newest holder.
func (idx nameIndex[U]) current(name string) (U, bool) {
	uid, ok := idx.newest[name]
	return uid, ok
}

// has reports whether name has a holder.
func (idx nameIndex[U]) has(name string) bool {
	_, ok := idx.newest[name]
	return ok
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
