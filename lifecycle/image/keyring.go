package image

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Credential is one registry login from an image pull secret.
type Credential struct {
	Username, Password, Auth string
	// Registry is the key it was stored under, as written (the ServerAddress CRI is given).
	Registry string
}

// Keyring is the credentials of a pod's image pull secrets by registry key.
type Keyring struct {
	entries []entry
}

type entry struct {
	key  registryKey
	cred Credential
}

// dockerConfigEntry is one login as Docker writes it.
type dockerConfigEntry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Auth     string `json:"auth,omitempty"`
}

// NewKeyring reads secrets of type kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg.
// A secret of another type or one that does not parse is an error naming it: the kubelet
// ignores such a secret silently, which leaves a user wondering why the pull was anonymous.
func NewKeyring(secrets []*corev1.Secret) (*Keyring, error) {
	k := &Keyring{}
	for _, s := range secrets {
		var logins map[string]dockerConfigEntry
		var err error
		switch s.Type {
		case corev1.SecretTypeDockerConfigJson:
			var cfg struct {
				Auths map[string]dockerConfigEntry `json:"auths"`
			}
			err = json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &cfg)
			logins = cfg.Auths
		case corev1.SecretTypeDockercfg:
			err = json.Unmarshal(s.Data[corev1.DockerConfigKey], &logins)
		default:
			return nil, fmt.Errorf("image pull secret %s/%s has type %q, want %s or %s", s.Namespace, s.Name, s.Type, corev1.SecretTypeDockerConfigJson, corev1.SecretTypeDockercfg)
		}
		if err != nil {
			return nil, fmt.Errorf("image pull secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		for reg, login := range logins {
			cred := Credential{Username: login.Username, Password: login.Password, Auth: login.Auth, Registry: reg}
			if cred.Username == "" && cred.Auth != "" {
				if user, pass, ok := decodeAuth(cred.Auth); ok {
					cred.Username, cred.Password = user, pass
				}
			}
			k.entries = append(k.entries, entry{key: parseKey(reg), cred: cred})
		}
	}
	// Most specific first, as the kubelet orders its keyring; ties keep the secrets' order.
	sort.SliceStable(k.entries, func(i, j int) bool {
		return len(k.entries[i].key.host)+len(k.entries[i].key.path) > len(k.entries[j].key.host)+len(k.entries[j].key.path)
	})
	return k, nil
}

func decodeAuth(auth string) (user, pass string, ok bool) {
	b, err := base64.StdEncoding.DecodeString(auth)
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(b), ":")
}

// Lookup returns the credentials that apply to image, most specific first; none means an
// anonymous pull.
func (k *Keyring) Lookup(image string) []Credential {
	if k == nil {
		return nil
	}
	ref := parseImage(image)
	var out []Credential
	for _, e := range k.entries {
		if e.key.matches(ref) {
			out = append(out, e.cred)
		}
	}
	return out
}

// registryKey is a registry key or an image name, split: host (with port) and path.
type registryKey struct {
	host, path string
}

// dockerHub is the host every spelling of Docker Hub's registry is reduced to.
const dockerHub = "docker.io"

func canonicalHost(h string) string {
	switch h {
	case "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com":
		return dockerHub
	}
	return h
}

// parseKey reads a keyring key: "https://registry:5000/v1/", "*.example.com/team", ...
func parseKey(key string) registryKey {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	host, p, _ := strings.Cut(key, "/")
	host = canonicalHost(host)
	p = strings.Trim(p, "/")
	if host == dockerHub && (p == "v1" || p == "v2") {
		p = "" // Docker's "index.docker.io/v1/" means the whole registry
	}
	return registryKey{host: host, path: p}
}

// parseImage splits an image reference as the Docker client does: the first component is a
// registry host only if it has a '.' or a ':' or is "localhost".
func parseImage(image string) registryKey {
	if i := strings.IndexAny(image, "@"); i >= 0 {
		image = image[:i]
	}
	first, rest, found := strings.Cut(image, "/")
	if !found || !(strings.ContainsAny(first, ".:") || first == "localhost") {
		return registryKey{host: dockerHub, path: image}
	}
	return registryKey{host: canonicalHost(first), path: rest}
}

func (k registryKey) matches(img registryKey) bool {
	if !hostMatches(k.host, img.host) {
		return false
	}
	return k.path == "" || img.path == k.path || strings.HasPrefix(img.path, k.path+"/") || strings.HasPrefix(img.path, k.path+":")
}

// hostMatches compares hosts label by label, a key's label may be a glob ("*.example.com"); the
// ports must be equal (none on both, or the same).
func hostMatches(pattern, host string) bool {
	pHost, pPort, _ := strings.Cut(pattern, ":")
	hHost, hPort, _ := strings.Cut(host, ":")
	if pPort != hPort {
		return false
	}
	pLabels, hLabels := strings.Split(pHost, "."), strings.Split(hHost, ".")
	if len(pLabels) != len(hLabels) {
		return false
	}
	for i := range pLabels {
		if ok, err := path.Match(pLabels[i], hLabels[i]); err != nil || !ok {
			return false
		}
	}
	return true
}
