package lifecycle

import "time"

// refreshVolumesSoonLocked makes the next sync of the pod bring its volumes up to date at
// once, not a VolumeRefresh after the last time: UpdatePod calls it, as the kubelet's syncPod
// for an updated pod has its volume manager process the pod's volumes again (ReprocessPod, and
// a remount of downwardAPI, configMap, secret and projected volumes). So new labels and
// annotations reach downwardAPI files within a sync (the e2e "Downward API volume should
// update labels on modification" and "...annotations..."), not up to a minute later.
//
// refreshVolumes marks a refresh done only when it used the pod that is current when it ends:
// an update that lands while a refresh runs is not lost to it.
func refreshVolumesSoonLocked(st *podState) {
	st.volumesRefreshed = time.Time{}
}
