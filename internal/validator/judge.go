package validator

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/regular"
)

// ChangedFilesVar names a file of the paths changed since arming, NUL-separated; "" when unknown.
const ChangedFilesVar = "STOPGATE_CHANGED_FILES"

// Judge is a check a model decides (docs/judge.md); the key is read from KeyEnv when it runs.
type Judge struct {
	Rubric, API, Endpoint, Model, KeyEnv string
	Evidence                             []string // "changed", "file:PATH", "output:VALIDATOR"
	MaxBytes                             int      // the evidence sent is cut to it
	CacheDir                             string   // answers by hash of what was asked; "": none kept
}

// Usage is a judge's tokens as the API counted them; Cached: no request.
type Usage struct {
	In, Out int
	Cached  bool
}

type answer struct {
	Verdict string   `json:"verdict"` // "pass" or "fail"
	Reasons []string `json:"reasons"`
	Quotes  []string `json:"quotes"` // verbatim from the evidence; a fail needs one
}

// unavailable is a judge that gave no verdict: no pass, no failure of the work.
func unavailable(why string, usage *Usage) Result {
	return Result{Problem: "judge unavailable: " + why, Unavailable: true, ExitCode: -1, Usage: usage}
}

// runJudge asks s.Judge's model about its evidence: an answer not reached, parsed or verified is unavailable, never a pass.
func runJudge(ctx context.Context, env Env, s Spec, specs []Spec, results []Result) (r Result) {
	start, j := time.Now(), s.Judge
	defer func() { r.Duration = time.Since(start) }()
	bodies, user, err := evidence(env, s, specs, results)
	if err != nil {
		return unavailable(err.Error(), nil)
	}
	system := judgeSystem + j.Rubric
	sum := sha256.Sum256([]byte(strings.Join([]string{j.API, j.Endpoint, j.Model, system, user}, "\x00")))
	cache := "" // none kept: ReadFile("") finds nothing
	if j.CacheDir != "" {
		cache = filepath.Join(j.CacheDir, hex.EncodeToString(sum[:])+".json")
	}
	var a answer
	if data, err := regular.ReadFile(cache, 1<<20); err == nil && json.Unmarshal(data, &a) == nil && (a.Verdict == "pass" || a.Verdict == "fail") {
		return a.result(j.Model, &Usage{Cached: true})
	}
	key := os.Getenv(j.KeyEnv)
	switch {
	case key == "":
		return unavailable(j.KeyEnv+", which key_env names, is not set in the hooks' environment", nil)
	case env.Ask == nil: // detect and testhook link no HTTP
		return unavailable("this program has no model client", nil)
	}
	timeout, _ := env.within(s.timeout())
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	text, in, out, err := env.Ask(ctx, j.API, j.Endpoint, j.Model, key, system, user)
	usage := &Usage{In: in, Out: out}
	if errors.Is(err, context.DeadlineExceeded) {
		r = unavailable(fmt.Sprintf("no answer within %s", timeout), usage)
		r.TimedOut = true
		return r
	} else if err != nil {
		return unavailable(strings.ReplaceAll(err.Error(), key, "[key]"), usage)
	}
	a, why := parseAnswer(text, bodies)
	if why != "" {
		r = unavailable("the judge's answer could not be verified: "+why, usage)
		r.Output = cli.Clip(text, 2000, "…")
		return r
	}
	if cache != "" {
		data, _ := json.Marshal(a)
		os.MkdirAll(j.CacheDir, 0o755)
		atomicfile.Write(cache, data, atomicfile.Options{TempPrefix: ".judge-tmp-", NoSync: true})
	}
	return a.result(j.Model, usage)
}

// judgeSystem is the system prompt, before the rubric; it is part of a cached answer's key.
//
//go:embed judge.txt
var judgeSystem string

func (a answer) result(model string, usage *Usage) Result {
	var b strings.Builder
	fmt.Fprintf(&b, "judge (%s): %s\n", model, a.Verdict)
	for _, r := range a.Reasons {
		b.WriteString("- " + cli.OneLine(r) + "\n")
	}
	if len(a.Quotes) > 0 {
		b.WriteString("quoted from the evidence:\n")
	}
	for _, q := range a.Quotes {
		b.WriteString("  > " + cli.OneLine(q) + "\n")
	}
	return Result{Passed: a.Verdict == "pass", Output: b.String(), Usage: usage}
}

// parseAnswer verifies the answer (a fail quotes, each quote verbatim in bodies); why says what is wrong.
func parseAnswer(text string, bodies []string) (answer, string) {
	var a answer
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "```") { // a fenced block: ```json … ```
		t = strings.TrimSuffix(strings.TrimSpace(t[strings.IndexByte(t+"\n", '\n'):]), "```")
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil || dec.More() {
		return a, "it is not the JSON object asked for"
	}
	switch {
	case a.Verdict != "pass" && a.Verdict != "fail":
		return a, fmt.Sprintf("its verdict %q is neither pass nor fail", a.Verdict)
	case len(a.Reasons) == 0:
		return a, "it gives no reason"
	case a.Verdict == "fail" && len(a.Quotes) == 0:
		return a, "it fails the work without quoting the evidence"
	}
	for _, q := range a.Quotes {
		if strings.TrimSpace(q) == "" || !slices.ContainsFunc(bodies, func(b string) bool { return strings.Contains(b, q) }) {
			return a, fmt.Sprintf("it quotes %q, which the evidence does not hold", cli.Clip(q, 200, "…"))
		}
	}
	return a, ""
}

// evidence reads what the judge may see, cut to MaxBytes, and the user message framing it.
func evidence(env Env, s Spec, specs []Spec, results []Result) (bodies []string, user string, err error) {
	left := max(s.Judge.MaxBytes, 1)
	var b strings.Builder
	add := func(name, body string) {
		if len(body) > left {
			body = cli.Clip(body, left, "\n[… cut: the evidence sent is capped at evidence_bytes]")
		}
		left = max(left-len(body), 0)
		bodies = append(bodies, body)
		fmt.Fprintf(&b, "<evidence name=%q>\n%s\n</evidence>\n", name, body)
	}
	for _, e := range s.Judge.Evidence {
		kind, arg, _ := strings.Cut(e, ":")
		switch kind {
		case "changed":
			files, err := changedFiles(s.Env)
			if err != nil {
				return nil, "", err
			}
			add("changed", "the files changed since the prompt was armed: "+strings.Join(files, ", "))
			var recs []*baseline.Snapshot
			for _, p := range s.Baselines {
				if r, err := baseline.Load(p); err == nil {
					recs = append(recs, r)
				}
			}
			for _, f := range files {
				add("file:"+f, changedEvidence(env.Dir, f, recs, left))
			}
		case "file":
			add(e, readEvidence(env.Dir, arg, left))
		case "output":
			body := "(not run at this stop)"
			if i := slices.IndexFunc(specs, func(s Spec) bool { return s.Name == arg && s.Judge == nil }); i >= 0 {
				body = fmt.Sprintf("(%s)\n%s", results[i].Summary(), results[i].Output)
			}
			add(e, body)
		}
	}
	return bodies, b.String(), nil
}

func changedFiles(env []string) ([]string, error) {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, ChangedFilesVar+"="); ok {
			path = v
		}
	}
	if path == "" {
		return nil, errors.New("the files changed since the prompt was armed are unknown (armed by an older stopgate, rebuilt from the transcript, or run by gate run)")
	}
	data, err := regular.ReadFile(path, 16<<20)
	if err != nil {
		return nil, fmt.Errorf("the list of files changed since the prompt was armed: %w", err)
	}
	return strings.FieldsFunc(string(data), func(r rune) bool { return r == 0 }), nil
}

// changedEvidence is rel's diff since arming, or its text when new or not recorded.
func changedEvidence(dir, rel string, recs []*baseline.Snapshot, most int) string {
	was, ok := baseline.Armed(recs, filepath.ToSlash(rel))
	now := readEvidence(dir, rel, max(most, 1<<20))
	_, gone := os.Lstat(filepath.Join(dir, rel))
	switch {
	case ok && !was.Exists:
		return "(new since the prompt was armed)\n" + now
	case ok && was.Kept && errors.Is(gone, os.ErrNotExist):
		return "(deleted since the prompt was armed; it held:)\n" + string(was.Text)
	case !ok || !was.Kept:
		return now
	}
	d, err := baseline.LineDiff(was.Text, []byte(now))
	if err != nil {
		return now
	}
	return "(changed since the prompt was armed: lines removed as -N, added as +N)\n" + d
}

// readEvidence is the first most+1 bytes of a file, or why not.
func readEvidence(dir, rel string, most int) string {
	data, _, err := regular.Read(filepath.Join(dir, rel), int64(most)+1)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "(no such file)"
	case err != nil:
		return fmt.Sprintf("(unreadable: %v)", unwrapPath(err))
	}
	return string(data)
}
