package podutil

import (
	"fmt"
	"strings"
)

// ParseFullName splits a full name built by FullName back into name and namespace. Neither
// part may be empty, and there must be exactly one "_": object names and namespaces are DNS
// names, which cannot contain one, so any other shape is not a full name.
func ParseFullName(fullName string) (name, namespace string, err error) {
	parts := strings.Split(fullName, "_")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("parse pod full name %q: want \"name_namespace\"", fullName)
	}
	return parts[0], parts[1], nil
}
