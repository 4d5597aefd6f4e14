package conformance

import (
	"encoding/xml"
	"fmt"
	"os"
	"slices"
	"strings"
)

// The JUnit report as ginkgo v2 writes it (reporters.JUnitTestSuites): only what a verdict
// needs.
type junitSuites struct {
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string        `xml:"name,attr"`
	Status  string        `xml:"status,attr"`
	Time    float64       `xml:"time,attr"`
	Skipped *junitMessage `xml:"skipped"`
	Failure *junitProblem `xml:"failure"`
	Error   *junitProblem `xml:"error"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message     string `xml:"message,attr"`
	Type        string `xml:"type,attr"`
	Description string `xml:",chardata"`
}

// Spec states in a Summary.
const (
	StatePassed  = "passed"
	StateFailed  = "failed"
	StateSkipped = "skipped" // selected, and skipped by the spec itself (Skip: "not supported here")
)

// Spec is one selected spec's outcome.
type Spec struct {
	Name    string  `json:"name"`
	State   string  `json:"state"`
	Seconds float64 `json:"seconds"`
	// Reason is the first line of the failure (or of the skip's reason).
	Reason string `json:"reason,omitempty"`
}

// Counts are a run's totals over the selected specs.
type Counts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// readJUnit reads the report's selected specs, sorted by name: the specs ginkgo's focus and
// skip left out are in the report too, as skipped with no reason ("skipped"), and are not.
// Suite nodes (SynchronizedBeforeSuite, ReportAfterSuite, …) count only when they failed: a
// failed set-up fails the run.
func readJUnit(path string) ([]Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc junitSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var specs []Spec
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if spec, ok := specOf(c); ok {
				specs = append(specs, spec)
			}
		}
	}
	slices.SortFunc(specs, func(a, b Spec) int { return strings.Compare(a.Name, b.Name) })
	return specs, nil
}

func specOf(c junitCase) (Spec, bool) {
	isIt := strings.HasPrefix(c.Name, "[It] ")
	spec := Spec{Name: strings.TrimPrefix(c.Name, "[It] "), Seconds: c.Time}
	switch {
	case c.Failure != nil || c.Error != nil:
		p := c.Failure
		if p == nil {
			p = c.Error
		}
		spec.State, spec.Reason = StateFailed, firstLine(p.Message, p.Description)
	case c.Skipped != nil || c.Status == "skipped" || c.Status == "pending":
		if !isIt || c.Skipped == nil || !strings.HasPrefix(c.Skipped.Message, "skipped - ") {
			return spec, false // filtered out (or pending): not selected
		}
		spec.State, spec.Reason = StateSkipped, firstLine(strings.TrimPrefix(c.Skipped.Message, "skipped - "))
	case c.Status == "passed":
		if !isIt {
			return spec, false
		}
		spec.State = StatePassed
	default:
		spec.State, spec.Reason = StateFailed, "state "+c.Status
	}
	return spec, true
}

// firstLine is the first non-empty line of the first non-empty text, at most 300 bytes.
func firstLine(texts ...string) string {
	for _, t := range texts {
		for _, line := range strings.Split(t, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				if len(line) > 300 {
					line = line[:300] + "…"
				}
				return line
			}
		}
	}
	return ""
}

// count totals specs by state.
func count(specs []Spec) Counts {
	var c Counts
	for _, s := range specs {
		switch s.State {
		case StatePassed:
			c.Passed++
		case StateFailed:
			c.Failed++
		case StateSkipped:
			c.Skipped++
		}
	}
	return c
}
