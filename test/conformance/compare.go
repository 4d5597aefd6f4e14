package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// ReadResult reads a summary.json.
func ReadResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Compare is the side-by-side of two runs in Markdown, as docs/conformance.md shows them: the
// totals, then every spec whose state differs (a spec one run did not select shows "—"),
// with the reason each run gave.
func Compare(a, b *Result) string {
	var sb strings.Builder
	name := func(r *Result) string {
		if r.Provider != "" {
			return r.Agent + " (" + r.Provider + ")"
		}
		return r.Agent
	}
	fmt.Fprintf(&sb, "| | %s | %s |\n|---|---|---|\n", name(a), name(b))
	for _, row := range []struct {
		label string
		get   func(*Result) string
	}{
		{"build", func(r *Result) string { return r.Version }},
		{"specs selected", func(r *Result) string { return fmt.Sprint(len(r.Specs)) }},
		{"passed", func(r *Result) string { return fmt.Sprint(r.Passed) }},
		{"failed", func(r *Result) string { return fmt.Sprint(r.Failed) }},
		{"skipped", func(r *Result) string { return fmt.Sprint(r.Skipped) }},
		{"suite wall time", func(r *Result) string { return (time.Duration(r.Seconds) * time.Second).String() }},
		{"ginkgo processes", func(r *Result) string { return fmt.Sprint(r.Procs) }},
		{"date", func(r *Result) string { return r.Date }},
	} {
		fmt.Fprintf(&sb, "| %s | %s | %s |\n", row.label, row.get(a), row.get(b))
	}
	as, bs := byName(a.Specs), byName(b.Specs)
	names := slices.Sorted(maps.Keys(as))
	for n := range bs {
		if _, ok := as[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var diff []string
	for _, n := range names {
		sa, sb := as[n], bs[n]
		if sa.State != sb.State {
			diff = append(diff, fmt.Sprintf("| %s | %s | %s |", cell(n), state(sa), state(sb)))
		}
	}
	fmt.Fprintf(&sb, "\n%d specs differ:\n\n| spec | %s | %s |\n|---|---|---|\n", len(diff), name(a), name(b))
	for _, d := range diff {
		sb.WriteString(d + "\n")
	}
	return sb.String()
}

func byName(specs []Spec) map[string]Spec {
	m := make(map[string]Spec, len(specs))
	for _, s := range specs {
		m[s.Name] = s
	}
	return m
}

// state is a spec's state with its reason, for a table cell; "—" when not selected.
func state(s Spec) string {
	if s.State == "" {
		return "—"
	}
	if s.Reason == "" {
		return s.State
	}
	return s.State + ": " + cell(s.Reason)
}

// cell escapes what would break a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
