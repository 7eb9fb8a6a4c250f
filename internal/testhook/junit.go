package testhook

import (
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// JUnit XML, in the shape CI systems read (Jenkins, GitLab, GitHub
// actions): one testsuite per category, one testcase per test. A test that
// has not run is a skipped testcase saying so.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// junit renders the run as JUnit XML.
func junit(st *State) ([]byte, error) {
	names, byCat := st.categories()
	total := st.counts()
	out := junitSuites{Name: st.File, Tests: total.Total(), Failures: total.Failed, Skipped: total.Skipped + total.NotRun}
	for _, cat := range names {
		c := st.countsOf(byCat[cat])
		s := junitSuite{Name: cat, Tests: c.Total(), Failures: c.Failed, Skipped: c.Skipped + c.NotRun, Time: seconds(c.Time)}
		for _, i := range byCat[cat] {
			t, r := &st.Tests[i], st.Results[i]
			tc := junitCase{Name: t.ID, Classname: cat, Time: "0.000"}
			if r != nil {
				tc.Time = seconds(r.Duration())
				if s.Timestamp == "" {
					s.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
				}
			}
			switch {
			case r == nil:
				tc.Skipped = &junitSkipped{Message: "not run"}
			case r.Status == Failed:
				text := strings.Join(r.Failures, "\n")
				if r.Answer != "" {
					text += "\n\nanswer:\n" + r.Answer
				}
				tc.Failure = &junitFailure{Message: strings.Join(r.Failures, "; "), Type: "expectation", Text: text}
			case r.Status == Skipped:
				tc.Skipped = &junitSkipped{Message: r.Reason}
			}
			s.Cases = append(s.Cases, tc)
		}
		out.Suites = append(out.Suites, s)
	}
	out.Time = seconds(total.Time)
	data, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(data, '\n')...), nil
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
