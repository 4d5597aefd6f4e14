package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"k8s.io/klog/v2"
)

// headerFile is a --manifest-url-header-file as it was read at start: the files are read once,
// by validate, so that the headers the source sends, the ones /configz names and the ones
// checked are the same.
type headerFile struct {
	path  string
	perm  fs.FileMode
	lines []headerLine
}

// headerLine is one header of a headerFile, with its line number for errors.
type headerLine struct {
	line        int
	name, value string
}

// groupOrWorldReadable are the permission bits that let users other than the owner read a
// header file.
const groupOrWorldReadable fs.FileMode = 0o044

// validateManifestHeader checks --manifest-url-header and reads the --manifest-url-header-file
// files, refusing any that cannot be read or holds a line that is not a header. Errors name the
// file and line, never what the line holds: it may be a credential.
func (o *options) validateManifestHeader(bad func(flag, format string, args ...any)) {
	_, flagErr := o.flagHeader()
	if flagErr != nil {
		bad("manifest-url-header", "%v", flagErr)
	}
	o.headerFiles = nil
	var readErr error
	for _, path := range o.ManifestURLHeaderFile {
		f, err := readHeaderFile(path)
		if err != nil {
			bad("manifest-url-header-file", "%v", err)
			readErr = err
			continue
		}
		o.headerFiles = append(o.headerFiles, f)
	}
	if flagErr == nil && readErr == nil {
		if _, err := o.manifestHeader(); err != nil {
			bad("manifest-url-header-file", "%v", err)
		}
	}
}

// flagHeader parses the repeated 'Name:value' headers of --manifest-url-header (or the config
// file's staticPodURLHeader, which it takes when the flag is not given).
func (o *options) flagHeader() (http.Header, error) {
	h := http.Header{}
	for _, kv := range o.ManifestURLHeader {
		name, value, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("header %q is not 'Name:value'", kv)
		}
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return h, nil
}

// manifestHeader is what every manifest URL request is sent with: the headers of
// --manifest-url-header and of the --manifest-url-header-file files as validate read them. A
// name repeated within one of these sources is sent with each of its values, as the kubelet
// sends a repeated --manifest-url-header; a name set by two of them is an error naming both,
// because it is a mistake more often than not — a token moved into a file and left on the
// command line too, or two files each with an Authorization — and the server would see both.
func (o *options) manifestHeader() (http.Header, error) {
	h, err := o.flagHeader()
	if err != nil {
		return nil, err
	}
	setBy := map[string]string{} // canonical name → the source that set it
	for name := range h {
		setBy[name] = "--manifest-url-header (or --config's staticPodURLHeader)"
	}
	for _, f := range o.headerFiles {
		mine := map[string]bool{}
		for _, l := range f.lines {
			name := http.CanonicalHeaderKey(l.name)
			if other, ok := setBy[name]; ok && !mine[name] {
				return nil, fmt.Errorf("%s line %d: header %q is also set by %s", f.path, l.line, name, other)
			}
			if !mine[name] {
				setBy[name] = fmt.Sprintf("%s line %d", f.path, l.line)
				mine[name] = true
			}
			h.Add(name, l.value)
		}
	}
	return h, nil
}

// readHeaderFile reads one header file: a 'Name: value' per line; blank lines and lines
// starting with # are skipped, the line ending (LF or CRLF) and the blanks around name and
// value trimmed. A file with no header at all is refused too: a secret that was meant to be
// provisioned into it and was not would otherwise go unnoticed until the server said 401.
func readHeaderFile(path string) (headerFile, error) {
	file, err := os.Open(path)
	if err != nil {
		return headerFile{}, err // names the path
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return headerFile{}, err
	}
	data, err := io.ReadAll(file)
	if err != nil {
		return headerFile{}, fmt.Errorf("%s: %w", path, err)
	}
	f := headerFile{path: path, perm: info.Mode().Perm()}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSpace(line) // the CR of a CRLF too
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || name == "":
			return headerFile{}, fmt.Errorf("%s line %d: not 'Name: value'", path, n)
		case !validHeaderName(name):
			return headerFile{}, fmt.Errorf("%s line %d: the header name is not an HTTP token (letters, digits and !#$%%&'*+-.^_`|~)", path, n)
		case !validHeaderValue(value):
			return headerFile{}, fmt.Errorf("%s line %d: the value of %s holds a control character", path, n, http.CanonicalHeaderKey(name))
		}
		f.lines = append(f.lines, headerLine{line: n, name: name, value: value})
	}
	if len(f.lines) == 0 {
		return headerFile{}, errors.New(path + ": no header in it")
	}
	return f, nil
}

// validHeaderName is RFC 9110's token, which net/http's client refuses to send otherwise: at
// start rather than at the first poll.
func validHeaderName(s string) bool {
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// validHeaderValue refuses the control characters (tab aside) net/http's client refuses.
func validHeaderValue(s string) bool {
	for _, c := range []byte(s) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// warnReadableHeaderFiles says which header files users other than the owner can read: the
// point of the file is to keep its credentials out of their reach.
func (o *options) warnReadableHeaderFiles(logger klog.Logger) {
	for _, f := range o.headerFiles {
		if f.perm&groupOrWorldReadable != 0 {
			logger.Info("Warning: --manifest-url-header-file is readable by users other than its owner; make it 0600 to keep its credentials to the agent",
				"file", f.path, "mode", fmt.Sprintf("%#o", f.perm))
		}
	}
}
