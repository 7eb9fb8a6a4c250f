package report

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/outcome"
)

// synthetic returns n stops over three weeks from four clients: most pass,
// some block, a few halt, as a team's log would look.
func synthetic(n int) []outcome.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	clients := []string{"claude", "claude", "codex", "gemini", "copilot"}
	prompts := []string{"release/checklist", "git/worktrees/create", "docs/changelog", "tests/write-unit-tests", "security/review", "joke"}
	var out []outcome.Record
	for i := range n {
		p := prompts[rng.IntN(len(prompts))]
		r := outcome.Record{Time: t0.Add(time.Duration(i) * 21 * 24 * time.Hour / time.Duration(n)), Event: "Stop",
			Session: fmt.Sprintf("s%03d", rng.IntN(400)), Prompts: []string{p}, Client: clients[rng.IntN(len(clients))]}
		fail := rng.IntN(100) < 10+5*len(p)%30
		for j, v := range []string{p + "-file", p + "-tests"} {
			code := 0
			if fail && j == 1 {
				code = 1
			}
			r.Checks = append(r.Checks, outcome.Check{Name: v, Prompts: []string{p}, Passed: code == 0, Result: map[bool]string{true: "passed", false: "exit status 1"}[code == 0],
				DurationMS: float64(rng.IntN(2000*(j*len(p)+1))) / 10, Kind: "run", ExitCode: &code})
		}
		switch {
		case !fail:
			r.Decision = outcome.Pass
		case rng.IntN(10) == 0:
			r.Decision, r.Reason = outcome.Halt, p+"-tests failed 3 times in a row; the session halts so that a person looks:\nexit status 1"
		default:
			r.Decision, r.Blocks = outcome.Block, 1
		}
		out = append(out, r)
	}
	return out
}

// The page a team's log makes renders in a real browser: headless
// Chromium (Debian's package, scripts/install-chromium) loads the file,
// runs its one inline script without a console error, and its DOM holds
// every chart with its marks. STOPGATE_REPORT_SCREENSHOT=FILE keeps the
// screenshot (docs/report.png is one).
func TestRenderInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (scripts/install-chromium installs it)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := Write(&buf, synthetic(5000), "stopgate: a team's three weeks", time.Date(2026, 3, 22, 9, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	dom, logs := runChromium(t, chromium, dir, "--dump-dom", "--screenshot="+shot, "file://"+page)

	charts := strings.Count(buf.String(), `<svg class="chart"`)
	if want := fmt.Sprintf(`data-rendered="%d"`, charts); !strings.Contains(dom, want) {
		t.Errorf("the page's script did not run to the end (no %s on body)", want)
	}
	for _, want := range []struct {
		re      string
		atLeast int
	}{
		{`<svg class="chart" id="(verdicts-over-time|failing-prompts|failing-validators|validator-time|clients)"`, 5},
		{`<rect class="pass"`, 21}, // a column a day, and the clients' bars
		{`<rect class="block"`, 21},
		{`<rect class="halt"`, 5},
		{`<tr class="halt-row">`, maxHalts},
		// each client's own view: its verdicts over time and what fails
		{`<details class="client" id="client-(claude|codex|gemini|copilot)">`, 4},
		{`<svg class="chart" id="client-(claude|codex|gemini|copilot)-(verdicts-over-time|failing-prompts|failing-validators|validator-time)"`, 16},
	} {
		if n := len(regexp.MustCompile(want.re).FindAllString(dom, -1)); n < want.atLeast {
			t.Errorf("rendered DOM has %d of %s, want at least %d", n, want.re, want.atLeast)
		}
	}
	if m := regexp.MustCompile(`(?m)^.*CONSOLE.*$|^.*Uncaught.*$|^.*Refused to.*$`).FindAllString(logs, -1); len(m) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(m, "\n"))
	}
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) < 10_000 {
		t.Fatalf("no screenshot of the page (%d bytes, %v)", len(png), err)
	}
	if keep := os.Getenv("STOPGATE_REPORT_SCREENSHOT"); keep != "" {
		if err := os.WriteFile(keep, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runChromium runs headless Chromium on args with a fresh profile, no
// network of its own and a hang bounded in seconds; it returns stdout and
// the browser's log.
func runChromium(t *testing.T, chromium, dir string, args ...string) (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--hide-scrollbars", "--window-size=960,1700",
		"--enable-logging=stderr", "--v=0", "--user-data-dir=" + filepath.Join(dir, "profile"),
	}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.String(), stderr.String()
}
