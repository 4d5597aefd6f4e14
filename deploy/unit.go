package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// UnitSettings reads a systemd unit file as systemd does for the simple files here: sections
// ([Service]), Key=value lines, # and ; comments, and a trailing backslash continuing a line.
// Each key maps to its values in order, as section.Key ("Service.ExecStart").
func UnitSettings(unit []byte) (map[string][]string, error) {
	settings := map[string][]string{}
	section := ""
	var pending strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(unit))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if pending.Len() == 0 && (line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";")) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending.WriteString(cont + " ")
			continue
		}
		line = pending.String() + line
		pending.Reset()
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.Trim(line, "[]")
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			return nil, fmt.Errorf("line %d: %q is not Key=value in a section", n, line)
		}
		k := section + "." + strings.TrimSpace(key)
		settings[k] = append(settings[k], strings.TrimSpace(value))
	}
	if pending.Len() > 0 {
		return nil, errors.New("the last line continues with a backslash")
	}
	return settings, sc.Err()
}

// ExecStart is the command line of vk-static.service, the binary first. Its arguments have no
// quotes or specifiers, so splitting on white space is how systemd reads them too.
func ExecStart() ([]string, error) {
	settings, err := UnitSettings(systemdUnit)
	if err != nil {
		return nil, fmt.Errorf("vk-static.service: %w", err)
	}
	lines := settings["Service.ExecStart"]
	if len(lines) != 1 {
		return nil, fmt.Errorf("vk-static.service: %d ExecStart lines, want 1", len(lines))
	}
	if strings.ContainsAny(lines[0], `"'%$`) {
		return nil, fmt.Errorf("vk-static.service: ExecStart %q has quotes or specifiers: read it as systemd would", lines[0])
	}
	return strings.Fields(lines[0]), nil
}
