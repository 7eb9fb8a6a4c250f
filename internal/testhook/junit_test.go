package testhook

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

// The JUnit XML parses back, with a suite per category in plan order, a
// case per test, failures carrying their reasons and the answer, and tests
// that did not run as skipped.
func TestJUnit(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := newState("s", &Suite{File: "t.json"}, []Test{
		{ID: "a", Category: "auth", Action: "x"},
		{ID: "b", Category: "api", Action: "x"},
		{ID: "c", Category: "auth", Action: "x"},
		{ID: "d", Category: "api", Action: "x"},
	}, Filters{}, "report.md", false, t0)
	st.Results[0] = &Result{Status: Passed, Started: t0, Finished: t0.Add(1500 * time.Millisecond)}
	st.Results[1] = &Result{Status: Failed, Failures: []string{`does not contain "x"`, "no <match> & more"}, Answer: "got ]]> y", Started: t0, Finished: t0.Add(time.Second)}
	st.Results[2] = &Result{Status: Skipped, Reason: "skipped by the user", Started: t0, Finished: t0}

	data, err := (&runner{}).render("junit.xml.tmpl", st)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Skipped  int    `xml:"skipped,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &got); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if got.Tests != 4 || got.Failures != 1 || got.Skipped != 2 || len(got.Suites) != 2 {
		t.Fatalf("totals %d/%d/%d, %d suites\n%s", got.Tests, got.Failures, got.Skipped, len(got.Suites), data)
	}
	auth, api := got.Suites[0], got.Suites[1]
	if auth.Name != "auth" || auth.Tests != 2 || auth.Skipped != 1 || api.Name != "api" || api.Failures != 1 || api.Skipped != 1 {
		t.Errorf("suites %+v %+v", auth, api)
	}
	if c := auth.Cases[0]; c.Name != "a" || c.Classname != "auth" || c.Time != "1.500" || c.Failure != nil || c.Skipped != nil {
		t.Errorf("passed case %+v", c)
	}
	f := api.Cases[0].Failure
	if f == nil || f.Message != `does not contain "x"; no <match> & more` || !strings.Contains(f.Text, "answer:\ngot ]]> y") {
		t.Errorf("failure %+v", f)
	}
	if s := auth.Cases[1].Skipped; s == nil || s.Message != "skipped by the user" {
		t.Errorf("skipped case %+v", auth.Cases[1])
	}
	if s := api.Cases[1].Skipped; s == nil || s.Message != "not run" {
		t.Errorf("not-run case %+v", api.Cases[1])
	}
}
