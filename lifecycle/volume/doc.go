// Package volume prepares a pod's volumes on the host and resolves each container's
// volumeMounts to host paths, for the lifecycle backends: the process backend's supervisor
// bind-mounts each Mount in the container's private mount namespace, the CRI backend passes
// the same paths as CRI Mounts. The package itself mounts nothing into containers; the mounts
// it makes are on the host, where the kubelet makes them: tmpfs, and the bind mount of each
// subPath.
//
// Layout and behaviour are the kubelet's (v1.36):
//
//   - A volume lives in <PodsDir>/<uid>/volumes/<plugin>/<name>, plugin being
//     kubernetes.io~empty-dir, ~configmap, ~secret, ~downward-api or ~projected. A hostPath
//     volume is its own path, symlinks resolved.
//   - emptyDir: a 0777 directory. sizeLimit is NOT enforced on disk: the kubelet evicts a pod
//     that outgrows it, and nothing here does (Setup warns). medium Memory: tmpfs, sized the
//     smallest of the node's allocatable memory, the pod's memory limit and sizeLimit. Without
//     the right to mount (Config.CanMount false) it is a plain directory, with a warning.
//   - hostPath: only under Config.AllowedHostPaths (whole path elements, after Clean, with
//     symlinks resolved, so /srv/link -> /etc is judged as /etc). type checks as the kubelet:
//     DirectoryOrCreate makes a 0755 directory, FileOrCreate an empty 0644 file, Directory,
//     File, Socket, CharDevice and BlockDevice check.
//   - configMap, secret, downwardAPI, projected (configMap, secret and downwardAPI sources,
//     and serviceAccountToken, below):
//     files written the kubelet's atomic way — a timestamped ..<ts> directory, a ..data symlink
//     to it swapped by rename, each top-level name a symlink through ..data — so a reader sees
//     one version or the next, never a mix. items, paths (relative, no "..") and modes
//     (defaultMode, 0644 when unset, and per item) as the kubelet. A missing required object
//     or key is a *MissingObjectError (the kubelet keeps the pod in ContainerCreating with
//     FailedMount events); an optional one gives an empty volume or skips the key. Secret,
//     downwardAPI and projected volumes are on tmpfs, as the kubelet wraps them in a memory
//     emptyDir, so secrets do not reach the disk (where tmpfs is possible).
//   - projected serviceAccountToken (every API pod has one, in the kube-api-access-* volume the
//     ServiceAccount admission adds): a token for the pod's spec.serviceAccountName ("default"
//     when unset) requested through Config.Tokens (the TokenRequest API, with the node's
//     identity) as the kubelet's token manager does — the source's audience (none: the API
//     server's), expirationSeconds (3600 when unset, at least 600), bound to the pod (Kind
//     Pod, name, UID) — written at the source's path with the volume's defaultMode. Tokens are
//     cached per namespace, service account, audience, expiration and pod UID; a new one is
//     requested only when the cached one is older than 80% of its TTL or than 24h (a failed
//     request keeps a token that has not expired). Teardown forgets the pod's tokens.
//   - Refresh is the kubelet's periodic remount of those volumes: a new version only when the
//     content changed, and only of volumes Setup made (a Refresh after Teardown makes nothing).
//   - fsGroup (spec.securityContext.fsGroup), the kubelet's SetVolumeOwnership: every file
//     and directory of an emptyDir, configMap, secret, downwardAPI or projected volume gets the
//     fsGroup as its group; directories get the setgid bit and group search, so that what a
//     container creates is the group's too; files get group read and write (emptyDir) or
//     group read (the others) added to their mode — a 0400 defaultMode becomes 0440. An
//     emptyDir's is done when its root does not show it yet (its first Setup, as the kubelet
//     does it once; a Setup after an agent restart leaves what containers did alone); the
//     others' whenever a new ..<ts> version is written (Setup, Refresh), before it is
//     published, so every version has it; an unchanged version is not rewritten for it.
//     A file whose group or mode cannot be changed is logged, not an error, as in the kubelet.
//     fsGroupChangePolicy has no effect on these kinds, as in the kubelet (which passes it to
//     volumes with storage of their own: CSI, local, ...). A projected serviceAccountToken is
//     0600 once the pod has an fsGroup or an fsUser (every container runs as the same
//     runAsUser), the fsUser's, and with the fsGroup's group read 0640. hostPath volumes are
//     left alone. The fsGroup as a supplementary group of the containers is the backend's.
//   - Mounts: configMap, secret, downwardAPI and projected mounts are read-only, as the
//     kubelet's; a subPath (or expanded subPathExpr) is resolved inside its volume, symlinks
//     followed only while they stay in it, and created as a directory when missing, with the
//     volume root's mode including its setgid and sticky bits (the kubelet's SafeMakeDir).
//     What was resolved is then opened beneath the volume without following any symlink
//     (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or one O_NOFOLLOW openat per component
//     on kernels without it) and bind-mounted, through its descriptor, at
//     <PodsDir>/<uid>/volume-subpaths/<volume>/<container>/<index>, the kubelet's
//     doBindSubPath: the runtime mounts that path, which no container can reach, so a
//     container sharing the volume that swaps a checked directory for a symlink to / is
//     refused (ErrOutsideVolume) or too late (CVE-2017-1002101, CVE-2021-25741). The same
//     container again reuses its mount, or replaces it when the subPath is another file by
//     then; mounts never stack. Teardown detaches them (MNT_DETACH) and removes their mount
//     points only once nothing is mounted below volume-subpaths; a mount there that is not at
//     a mount point of a subPath is not Teardown's, and keeps the directory, with an error.
//     Without the right to mount (Config.CanMount false) the checked path itself is returned,
//     and the window until the runtime opens it stays.
//
// Refused, each with a *FieldError naming the field and saying what to do: every other volume
// kind (persistentVolumeClaim, csi, nfs, ephemeral, image, ...), projected clusterTrustBundle
// and podCertificate, volumeDevices, mountPropagation other than None, recursiveReadOnly
// Enabled, hostPaths outside the allowed prefixes, and when there is no API server configMap
// and secret volumes and serviceAccountToken sources (Config.Tokens nil: set
// automountServiceAccountToken: false).
//
// Not done: SELinux relabelling, the kubelet's progress events for a slow fsGroup change
// (VolumePermissionChangeInProgress), the up to 10 s of random jitter the
// kubelet's token manager adds to its refresh, the tmpfs noswap option, pod overhead in the
// tmpfs size, emptyDir hugepages media (refused).
//
// Smallest use:
//
//	m, err := volume.New(volume.Config{
//		PodsDir:          "/var/lib/vk-static/pods",
//		AllowedHostPaths: []string{"/srv"},
//		HostPathFlag:     "--process-allowed-host-paths",
//		Objects:          nodeobjects.NewClientGetter(client),
//		Tokens:           nodeobjects.NewClientTokenRequester(client),
//		CanMount:         os.Geteuid() == 0,
//	})
//	vols, warnings, err := m.Setup(ctx, pod, facts, allocatable) // warnings: the pod's Events
//	mounts, err := m.Mounts(pod, &pod.Spec.Containers[0], vols, expand)
//	// ... run the container with mounts; on each periodic sync:
//	changed, err := m.Refresh(ctx, pod, facts, allocatable)
//	// ... when the pod is gone:
//	err = m.Teardown(ctx, pod.UID)
package volume
