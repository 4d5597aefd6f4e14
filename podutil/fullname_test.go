package podutil

import "testing"

func TestParseFullName(t *testing.T) {
	for _, tc := range []struct {
		in              string
		name, namespace string
		ok              bool
	}{
		{"web_default", "web", "default", true},
		{BuildFullName("etcd-node-a", "kube-system"), "etcd-node-a", "kube-system", true},
		{"web", "", "", false},
		{"_default", "", "", false},
		{"web_", "", "", false},
		{"a_b_c", "", "", false},
		{"", "", "", false},
	} {
		name, ns, err := ParseFullName(tc.in)
		if (err == nil) != tc.ok || name != tc.name || ns != tc.namespace {
			t.Errorf("ParseFullName(%q) = %q, %q, %v; want %q, %q, ok=%v", tc.in, name, ns, err, tc.name, tc.namespace, tc.ok)
		}
	}
}
