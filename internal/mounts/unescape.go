package mounts

import (
	"strconv"
	"strings"
)

// Unescape undoes the kernel's octal escapes in /proc/*/mountinfo's paths (\040 for a space,
// \134 for a backslash, …); a backslash not followed by three octal digits stays.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
