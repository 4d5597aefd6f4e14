package env

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// fileValue reads key from the env file at path inside the volume directory dir, for an env
// fileKeyRef (feature EnvFiles, beta and on since v1.35). The file is opened through os.Root
// so that neither ".." nor a symlink leads out of the volume, as the kubelet's securejoin does.
// "" is a key the file does not define (or defines as empty: the kubelet cannot tell them
// apart either).
func fileValue(dir, path, key string) (string, error) {
	f, err := os.OpenInRoot(dir, path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	return parseEnvFile(f, key)
}

// parseEnvFile returns the value of key in an env file, the kubelet's strict subset of POSIX
// shell (pkg/kubelet/util/env.ParseEnv), whose rules are kept to the letter because a file a
// kubelet rejects must be rejected here too:
//
//   - NAME='value' with the value in single quotes, taken literally, possibly over several
//     lines (the newlines kept); after the closing quote only blanks and a # comment;
//   - leading blanks, blank lines and lines starting with # are ignored;
//   - a blank before "=" is an error; a blank right after it makes the value empty
//     (NAME= 'x' is NAME="" in a shell), the rest of that line unread;
//   - the first definition of key is its value; the lines after it are not read, the lines
//     before it must be valid.
func parseEnvFile(r io.Reader, key string) (string, error) {
	scanner := bufio.NewScanner(r)
	lineNum := 0
	for scanner.Scan() {
		lineNum++
		line := strings.TrimLeft(scanner.Text(), " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		namePart, valuePart, found := strings.Cut(line, "=")
		if !found {
			return "", fmt.Errorf("line %d: missing '='", lineNum)
		}
		name := strings.TrimRight(namePart, " \t")
		if name == "" {
			return "", fmt.Errorf("line %d: empty variable name", lineNum)
		}
		if name != namePart {
			return "", fmt.Errorf("line %d: whitespace before '=' is not allowed", lineNum)
		}
		if strings.TrimLeft(valuePart, " \t") != valuePart {
			if name == key {
				return "", nil
			}
			continue
		}
		rest, quoted := strings.CutPrefix(valuePart, "'")
		if !quoted {
			return "", fmt.Errorf("line %d: value must be enclosed in single quotes", lineNum)
		}
		var value strings.Builder
		startLine := lineNum
		for {
			inside, after, closed := strings.Cut(rest, "'")
			if closed {
				value.WriteString(inside)
				after = strings.TrimLeft(after, " \t")
				if after != "" && !strings.HasPrefix(after, "#") {
					return "", fmt.Errorf("line %d: unexpected content after closing quote", lineNum)
				}
				break
			}
			value.WriteString(rest)
			value.WriteByte('\n')
			if !scanner.Scan() {
				return "", fmt.Errorf("line %d: unclosed single quote", startLine)
			}
			lineNum++
			rest = scanner.Text()
		}
		if name == key {
			return value.String(), nil
		}
	}
	return "", scanner.Err()
}
