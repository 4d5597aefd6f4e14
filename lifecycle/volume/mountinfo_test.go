package volume

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseMountInfoLine(t *testing.T) {
	tests := []struct {
		line string
		want mountPoint
		ok   bool
	}{
		{line: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
			want: mountPoint{Path: "/mnt2", FSType: "ext3"}, ok: true},
		{line: `100 20 0:50 / /var/lib/pods/a\040b/vol rw,relatime shared:5 - tmpfs tmpfs rw,size=1024k`,
			want: mountPoint{Path: "/var/lib/pods/a b/vol", FSType: "tmpfs"}, ok: true},
		{line: `1 2 0:1 / /back\134slash rw - tmpfs tmpfs rw`, want: mountPoint{Path: `/back\slash`, FSType: "tmpfs"}, ok: true},
		{line: "garbage", ok: false},
		{line: "1 2 3 4 5 6 7", ok: false},
	}
	for _, tt := range tests {
		got, ok := parseMountInfoLine(tt.line)
		assert.Equal(t, tt.ok, ok, tt.line)
		assert.Equal(t, tt.want, got, tt.line)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		p, root string
		want    bool
	}{
		{"/srv", "/srv", true},
		{"/srv/x", "/srv", true},
		{"/srv2", "/srv", false},
		{"/sr", "/srv", false},
		{"/anything", "/", true},
		{"/", "/", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, within(tt.p, tt.root), "%s in %s", tt.p, tt.root)
	}
}
