package host

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Capacity is the machine's: its CPUs, its memory (MemTotal), the size of the filesystem that
// holds rootDir (ephemeral storage), and maxPods.
func Capacity(rootDir string, maxPods int64) (corev1.ResourceList, error) {
	mem, err := meminfo()
	if err != nil {
		return nil, err
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(rootDir, &fs); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", rootDir, err)
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(int64(mem["MemTotal"]), resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(fs.Blocks)*fs.Bsize, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(maxPods, resource.DecimalSI),
	}, nil
}

// Allocatable is capacity minus every reserved amount, never below zero, as the kubelet
// computes it from --system-reserved and --kube-reserved.
func Allocatable(capacity corev1.ResourceList, reserved ...corev1.ResourceList) corev1.ResourceList {
	out := capacity.DeepCopy()
	for name, q := range out {
		for _, r := range reserved {
			if v, ok := r[name]; ok {
				q.Sub(v)
			}
		}
		if q.Sign() < 0 {
			q = *resource.NewQuantity(0, q.Format)
		}
		out[name] = q
	}
	return out
}

// meminfo reads /proc/meminfo in bytes.
func meminfo() (map[string]uint64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 2 {
			continue
		}
		v, err := strconv.ParseUint(string(fields[1]), 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 2 && string(fields[2]) == "kB" {
			v *= 1024
		}
		out[string(bytes.TrimSuffix(fields[0], []byte(":")))] = v
	}
	if _, ok := out["MemTotal"]; !ok {
		return nil, fmt.Errorf("/proc/meminfo has no MemTotal")
	}
	return out, nil
}
