package kwok

import (
	"bytes"
	"embed"
	"io/fs"
	"slices"
)

// stageFiles are KWOK's fast node and pod stages and its lease heartbeat, copied from its
// module (see stages/*.yaml for where each comes from).
//
//go:embed stages/*.yaml
var stageFiles embed.FS

// Config is a KWOK configuration file (--config) holding every stage, one YAML document
// each, in file-name order.
func Config() []byte {
	names, err := fs.Glob(stageFiles, "stages/*.yaml")
	if err != nil {
		panic(err) // the pattern is constant and valid
	}
	slices.Sort(names)
	var docs [][]byte
	for _, n := range names {
		data, err := stageFiles.ReadFile(n)
		if err != nil {
			panic(err) // embedded: cannot fail
		}
		docs = append(docs, bytes.TrimSpace(data))
	}
	return append(bytes.Join(docs, []byte("\n---\n")), '\n')
}
