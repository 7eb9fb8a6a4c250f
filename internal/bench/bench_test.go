package bench_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/bench"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var ds []time.Duration
		for _, n := range ns {
			ds = append(ds, time.Duration(n)*time.Millisecond)
		}
		return ds
	}
	for _, tc := range []struct {
		ts   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(3, 1, 2), 50, 2 * time.Millisecond},
		{ms(4, 3, 2, 1), 50, 2 * time.Millisecond}, // the lower middle
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		{ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 100), 90, 10 * time.Millisecond},
		{ms(1, 2), 100, 2 * time.Millisecond},
	} {
		if got := bench.Percentile(tc.ts, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.ts, tc.p, got, tc.want)
		}
	}
}

func TestTable(t *testing.T) {
	tb := bench.Table{Header: []string{"what", "time"}, Right: []bool{false, true}}
	tb.Add("floor", bench.Ms(1234*time.Microsecond))
	tb.Add("détecté", bench.Ratio(3*time.Millisecond, 2*time.Millisecond))
	var b strings.Builder
	if err := tb.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := "| what    |    time |\n" +
		"| ------- | ------: |\n" +
		"| floor   | 1.23 ms |\n" +
		"| détecté |   1.50× |\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestGeneratedProject checks that the generated projects are what the
// table says: n valid mappings, a Matched read that arms one of them and
// an Unmatched one that arms none, in the client's input shape.
func TestGeneratedProject(t *testing.T) {
	for _, n := range []int{1, 10, 1000} {
		dir := t.TempDir()
		p, err := bench.WriteProject(dir, n)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := parseConfig(dir)
		if err != nil {
			t.Fatalf("%d mappings: %v", n, err)
		}
		if len(cfg.Mappings) != n || len(cfg.Validators) != n {
			t.Errorf("%d mappings, %d validators, want %d each", len(cfg.Mappings), len(cfg.Validators), n)
		}
		for _, tc := range []struct {
			input []byte
			arms  int
		}{{p.Matched("s"), 1}, {p.Unmatched("s"), 0}} {
			in, err := hook.Parse(tc.input, hook.PostToolUse)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, in.Tool.FilePath)
			if maps, _ := cfg.MatchPath(filepath.ToSlash(rel)); len(maps) != tc.arms {
				got := len(maps)
				t.Errorf("%d mappings: a read of %s arms %d, want %d", n, rel, got, tc.arms)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "src", "prompts", bench.Key(n/2)+".md")); err != nil {
			t.Errorf("the matched prompt's file: %v", err)
		}
	}
}

func TestSleepProject(t *testing.T) {
	dir := t.TempDir()
	p, err := bench.WriteSleepProject(dir, 16, "0.2", true)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	maps, _ := cfg.MatchPath("src/prompts/work.md")
	if len(maps) != 1 || len(maps[0].Validators) != 16 || cfg.Validators["sleep15"].Run != "sleep 0.2" || cfg.Settings.Confine != config.ConfineOn {
		t.Errorf("sleep project: %+v", maps)
	}
	var ev map[string]any
	if err := json.Unmarshal(bench.StopEvent(p.Dir, "s"), &ev); err != nil || ev["hook_event_name"] != "Stop" {
		t.Errorf("stop event: %v, %v", ev, err)
	}
}

// parseConfig parses the generated project's mappings.toml.
func parseConfig(dir string) (*config.Config, error) {
	file := filepath.Join(dir, "mappings.toml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return config.Parse(data, file, dir)
}
