package volume

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// podLocks serializes the work on one pod's volumes (a Refresh must not swap a directory a
// Teardown is removing) while different pods proceed in parallel. An entry lives only while
// someone holds or waits for it.
type podLocks struct {
	mu    sync.Mutex
	locks map[types.UID]*podLock
}

type podLock struct {
	sync.Mutex
	users int
}

func newPodLocks() podLocks {
	return podLocks{locks: map[types.UID]*podLock{}}
}

// lock locks uid's work and returns its unlock.
func (l *podLocks) lock(uid types.UID) (unlock func()) {
	l.mu.Lock()
	pl := l.locks[uid]
	if pl == nil {
		pl = &podLock{}
		l.locks[uid] = pl
	}
	pl.users++
	l.mu.Unlock()

	pl.Lock()
	return func() {
		pl.Unlock()
		l.mu.Lock()
		pl.users--
		if pl.users == 0 {
			delete(l.locks, uid)
		}
		l.mu.Unlock()
	}
}
