package conformance

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// RepoList is the content of KUBE_TEST_REPO_LIST: every registry of
// k8s.io/kubernetes/test/utils/image mapped into host (the run's registry, "127.0.0.1:PORT"),
// keeping the path below it, so that e2e-test-images/busybox:1.37.0-1 is pulled from
// host/e2e-test-images/busybox:1.37.0-1. The invalid registry's images stay unreachable: a
// port nothing listens on refuses them at once, where the upstream name would wait for DNS.
func RepoList(host string) ([]byte, error) {
	return yaml.Marshal(map[string]string{
		"promoterE2eRegistry":      host + "/e2e-test-images",
		"buildImageRegistry":       host + "/build-image",
		"invalidRegistry":          "127.0.0.1:1/invalid",
		"gcEtcdRegistry":           host,
		"gcRegistry":               host,
		"sigStorageRegistry":       host + "/sig-storage",
		"privateRegistry":          host + "/k8s-authenticated-test",
		"dockerLibraryRegistry":    host + "/library",
		"cloudProviderGcpRegistry": host + "/cloud-provider-gcp",
	})
}

// writeRepoList writes RepoList(host) to path.
func writeRepoList(path, host string) error {
	data, err := RepoList(host)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write KUBE_TEST_REPO_LIST: %w", err)
	}
	return nil
}
