package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// hostProgram copies a dynamically linked program of the machine's into the tree at p, with
// every shared library it loads at the path the dynamic loader finds it on the machine (as
// ldd lists them): the look-alike images get curl, nc -u, glibc's getent and hostname from the
// distribution's packages, which have no static builds.
func (t tree) hostProgram(p, hostPath string) error {
	if err := t.hostFile(p, hostPath, 0o755); err != nil {
		return err
	}
	libs, err := sharedLibraries(hostPath)
	if err != nil {
		return err
	}
	for _, lib := range libs {
		if err := t.hostFile(lib, lib, 0o755); err != nil {
			return fmt.Errorf("%s needs %s: %w", hostPath, lib, err)
		}
	}
	return nil
}

// sharedLibraries are the absolute paths ldd prints for program: "name => /path (addr)" and
// the loader's "/path (addr)"; the vDSO has no file.
func sharedLibraries(program string) ([]string, error) {
	out, err := exec.Command("ldd", program).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", program, err)
	}
	return parseLDD(out), nil
}

func parseLDD(out []byte) []string {
	var libs []string
	s := bufio.NewScanner(bytes.NewReader(out))
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if _, after, ok := strings.Cut(line, "=>"); ok {
			line = strings.TrimSpace(after)
		}
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "/") {
			libs = append(libs, f[0])
		}
	}
	return libs
}
