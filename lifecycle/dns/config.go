package dns

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Config is a pod's resolver configuration, what resolv.conf says.
type Config struct {
	Servers  []string
	Searches []string
	// Options are resolv.conf's options, "name" or "name:value".
	Options []string
}

// ResolvConf is c as a resolv.conf, as containerd writes a sandbox's.
func (c *Config) ResolvConf() []byte {
	var b bytes.Buffer
	if len(c.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(c.Searches, " "))
	}
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(c.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(c.Options, " "))
	}
	return b.Bytes()
}

// maxResolvConf is the most of a resolv.conf the kubelet reads.
const maxResolvConf = 10 << 20

// parse reads a resolv.conf as the kubelet's parseResolvConf: nameserver lines accumulate, the
// last search line wins (its domains without a trailing dot, "." left out), options accumulate,
// a later one of a name replacing an earlier one.
func parse(r io.Reader) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxResolvConf+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxResolvConf {
		return nil, fmt.Errorf("longer than %d bytes", maxResolvConf)
	}
	c := &Config{Servers: []string{}, Searches: []string{}, Options: []string{}}
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(nil, maxResolvConf)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "nameserver":
			if len(fields) < 2 {
				return nil, fmt.Errorf("a nameserver line names no server")
			}
			c.Servers = append(c.Servers, fields[1])
		case "search":
			c.Searches = []string{}
			for _, d := range fields[1:] {
				if d != "." {
					c.Searches = append(c.Searches, strings.TrimSuffix(d, "."))
				}
			}
		case "options":
			c.Options = mergeOptions(c.Options, fields[1:])
		}
	}
	return c, s.Err()
}

// optionName is an option's name: "ndots" of "ndots:5".
func optionName(o string) string { name, _, _ := strings.Cut(o, ":"); return name }

// mergeOptions is options with more added, an option of a name already there replacing it,
// sorted by name: the kubelet merges through a map, so it keeps no order to match.
func mergeOptions(options, more []string) []string {
	byName := map[string]string{}
	for _, o := range append(slices.Clone(options), more...) {
		byName[optionName(o)] = o
	}
	out := []string{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out
}

// podOptions are a pod's dnsConfig.options as resolv.conf writes them.
func podOptions(opts []corev1.PodDNSConfigOption) []string {
	out := make([]string, 0, len(opts))
	for _, o := range opts {
		if o.Value != nil && *o.Value != "" {
			out = append(out, o.Name+":"+*o.Value)
		} else {
			out = append(out, o.Name)
		}
	}
	return out
}

// withoutDuplicates is s with each string once, where it first appears.
func withoutDuplicates(s []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
