package sources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vk-static/vk-static/podutil"
)

// FuzzDecode: DecodeManifest never panics, is deterministic, and whatever it accepts is a
// well-formed static pod. Seeds are every file under testdata/manifests.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"good", "bad"} {
		entries, err := os.ReadDir(filepath.Join(manifests, dir))
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(manifests, dir, e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	opts := DecodeOptions{NodeName: "Fuzz-Node", Source: podutil.FileSource, Location: "/fuzz.yaml"}
	f.Fuzz(func(t *testing.T, data []byte) {
		pods, err := DecodeManifest(data, opts)
		again, err2 := DecodeManifest(data, opts)
		if (err == nil) != (err2 == nil) || len(pods) != len(again) {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if pods != nil {
				t.Fatalf("pods returned with an error: %v", err)
			}
			if !strings.HasPrefix(err.Error(), opts.Location+": ") {
				t.Fatalf("error does not name the location: %v", err)
			}
			return
		}
		for i, pod := range pods {
			if pod.UID == "" || pod.UID != again[i].UID {
				t.Fatalf("UID %q not stable (%q)", pod.UID, again[i].UID)
			}
			if !strings.HasSuffix(pod.Name, "-fuzz-node") || pod.Namespace == "" || pod.Spec.NodeName != opts.NodeName {
				t.Fatalf("static identity not applied: %s/%s on %q", pod.Namespace, pod.Name, pod.Spec.NodeName)
			}
			if podutil.Hash(pod) != string(pod.UID) || podutil.Source(pod) != podutil.FileSource {
				t.Fatalf("config annotations wrong: %v", pod.Annotations)
			}
			if len(pod.Spec.Containers) == 0 {
				t.Fatal("accepted a pod without containers")
			}
		}
	})
}
