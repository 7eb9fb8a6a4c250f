package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/e2e"
	"github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/example"
)

func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }

// runLimit bounds one client run: a hang fails in seconds, never wedges CI.
const runLimit = 90 * time.Second

// clientBin returns the installed client's program, relative to the module root, or
// skips: scripts/install-clients puts them there.
func clientBin(t *testing.T, rel string) string {
	t.Helper()
	path := filepath.Join(e2e.Root(t), "tmp", "e2e", rel)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not installed: run `make e2e-install` (scripts/install-clients)", rel)
	}
	return path
}

var wrapper struct {
	once sync.Once
	path string
	err  error
}

// captureWrapper builds internal/e2e/capture-then-exec once.
func captureWrapper(t *testing.T) string {
	t.Helper()
	wrapper.once.Do(func() {
		dir, err := os.MkdirTemp("", "stopgate-clients-wrapper-")
		if err != nil {
			wrapper.err = err
			return
		}
		wrapper.path = filepath.Join(dir, "capture-then-exec")
		cmd := exec.Command("go", "build", "-o", wrapper.path, "./internal/e2e/capture-then-exec")
		cmd.Dir = e2e.Root(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			wrapper.err = fmt.Errorf("go build capture-then-exec: %v\n%s", err, out)
		}
	})
	if wrapper.err != nil {
		t.Fatal(wrapper.err)
	}
	return wrapper.path
}

// Project is a throwaway copy of the example project, registered with one client by
// `gate init --client NAME`, whose bin/ commands capture each hook input.
type Project struct {
	t                  *testing.T
	Dir, Home, capture string
	client             string
}

// NewProject copies the example project and registers stopgate with client.
func NewProject(t *testing.T, client string) *Project {
	t.Helper()
	built := e2e.Stopgate(t)
	p := &Project{t: t, Dir: t.TempDir(), Home: t.TempDir(), capture: t.TempDir(), client: client}
	if err := example.Copy(e2e.Root(t), p.Dir); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(p.Dir, "bin")
	if err := example.CopyTree(captureWrapper(t), filepath.Join(bin, "capture-then-exec")); err != nil {
		t.Fatal(err)
	}
	p.WriteFile("bin/capture-then-exec.conf", p.capture+"\n"+built+"\n")
	for _, name := range []string{"detect", "gate", "testhook"} {
		if err := os.Symlink("capture-then-exec", filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(built, "gate"), "init", "--client", client)
	cmd.Dir, cmd.Env = p.Dir, []string{"HOME=" + p.Home, "PATH=" + os.Getenv("PATH")}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gate init --client %s: %v\n%s", client, err, out)
	}
	return p
}

// Path is rel inside the project.
func (p *Project) Path(rel string) string { return filepath.Join(p.Dir, filepath.FromSlash(rel)) }

// WriteFile writes a project file.
func (p *Project) WriteFile(rel, content string) {
	p.t.Helper()
	path := p.Path(rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// ReadFile reads a project file, "" when it is missing.
func (p *Project) ReadFile(rel string) string {
	b, _ := os.ReadFile(p.Path(rel))
	return string(b)
}

// Pending lists the queue's entry files, relative to the state dir.
func (p *Project) Pending() []string {
	var out []string
	root := p.Path("tmp/validation/sessions")
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			rel, _ := filepath.Rel(root, path)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// Captured is one hook input the client sent a stopgate command.
type Captured struct {
	Program string // detect, gate, testhook
	Raw     []byte
}

// Result is what one client run did.
type Result struct {
	Stdout, Stderr string
	Err            error
	Wall           time.Duration
	Inputs         []Captured
	Requests       []*fakellm.Request
}

// Run runs the client program with args and env (added to a minimal environment with
// the project's HOME) in the project, under runLimit, and collects the hook inputs.
func (p *Project) Run(srv *fakellm.Server, program string, args, env []string) *Result {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir = p.Dir
	cmd.Env = append([]string{"HOME=" + p.Home, "PATH=" + os.Getenv("PATH"), "TERM=dumb", "NO_COLOR=1", "CI=true"}, env...)
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := &Result{Stdout: stdout.String(), Stderr: stderr.String(), Err: err, Wall: time.Since(start), Requests: srv.Requests()}
	if ctx.Err() != nil {
		p.t.Fatalf("%s ran longer than %s\nstdout: %s\nstderr: %s", filepath.Base(program), runLimit, r.Stdout, tail(r.Stderr, 3000))
	}
	r.Inputs = p.takeCaptured()
	p.t.Logf("%s ran %.1fs, %d model requests, %d hook inputs", filepath.Base(program), r.Wall.Seconds(), len(r.Requests), len(r.Inputs))
	return r
}

// captured counts the inputs captured so far for program, leaving them in place.
func (p *Project) captured(program string) int {
	des, _ := os.ReadDir(p.capture)
	n := 0
	for _, de := range des {
		if strings.HasPrefix(de.Name(), program+".") {
			n++
		}
	}
	return n
}

// takeCaptured reads and removes the captured inputs, oldest first.
func (p *Project) takeCaptured() []Captured {
	des, err := os.ReadDir(p.capture)
	if err != nil {
		p.t.Fatal(err)
	}
	type file struct {
		c     Captured
		mtime time.Time
	}
	var files []file
	for _, de := range des {
		path := filepath.Join(p.capture, de.Name())
		data, err := os.ReadFile(path)
		info, ierr := de.Info()
		if err != nil || ierr != nil {
			continue
		}
		files = append(files, file{Captured{Program: strings.SplitN(de.Name(), ".", 2)[0], Raw: data}, info.ModTime()})
		os.Remove(path)
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].mtime.Before(files[j].mtime) })
	out := make([]Captured, len(files))
	for i, f := range files {
		out[i] = f.c
	}
	return out
}

// field returns a top-level string field of a captured input.
func (c Captured) field(name string) string {
	var m map[string]any
	json.Unmarshal(c.Raw, &m)
	s, _ := m[name].(string)
	return s
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// WriteUserFile writes a file under the project's HOME.
func (p *Project) WriteUserFile(rel, content string) {
	p.t.Helper()
	path := filepath.Join(p.Home, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// checkBlockFixPass checks the end of a block-fix-pass scenario, given the model
// requests and the hook inputs: the model was told the gate's fix and the guard's
// denial, the joke is written, mappings.toml is not rewritten, no entry is left, and
// every hook input fits its schema.
func checkBlockFixPass(t *testing.T, p *Project, client string, requests []*fakellm.Request, inputs []Captured) {
	t.Helper()
	var sawBlock, sawDeny bool
	for _, q := range requests {
		sawBlock = sawBlock || strings.Contains(q.Latest(), "Fix: Write the joke to output/joke.txt.")
		sawDeny = sawDeny || strings.Contains(q.Latest(), "it would change mappings.toml")
	}
	if !sawBlock || !sawDeny {
		t.Errorf("the model was told: block with fix %v, guard deny %v", sawBlock, sawDeny)
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		t.Errorf("output/joke.txt = %q", got)
	}
	if strings.Contains(p.ReadFile("mappings.toml"), "nothing to check") {
		t.Error("mappings.toml was rewritten")
	}
	if q := p.Pending(); len(q) != 0 {
		t.Errorf("entries left: %v", q)
	}
	checkInputs(t, client, inputs)
}

// checkHaltedLoop checks the end of a loop that never fixes its work: the gate ran at
// four stops (three blocks, then the halt), the model got five requests, and every
// hook input fits its schema.
func checkHaltedLoop(t *testing.T, client string, r *Result) {
	t.Helper()
	var stops []string
	for _, in := range r.Inputs {
		if in.Program == "gate" {
			stops = append(stops, in.event())
		}
	}
	if len(stops) != 4 {
		t.Errorf("the gate ran at %d stops (%v), want 4: three blocks, then the halt", len(stops), stops)
	}
	if n := len(r.Requests); n != 5 {
		t.Errorf("%d model requests, want 5: the read, the first stop, three more after blocks", n)
	}
	checkInputs(t, client, r.Inputs)
}

// The relay of a halt through the model, for a client that does not show a halt
// (Copilot CLI, Codex): the model is handed the reason, and a model that does as it is
// told replies with it, which the client prints.
const (
	relayed  = "stopgate halted this session, and this client does not show the user why"
	userSees = "stopgate halted the session: the joke checks failed after 3 blocked stops."
)

// checkHaltRelayed checks that the halt's reason reached the model and the user: a
// request carries it, and the client printed the model's reply to it.
func checkHaltRelayed(t *testing.T, r *Result, srv *fakellm.Server) {
	t.Helper()
	if !slices.ContainsFunc(srv.Requests(), func(q *fakellm.Request) bool {
		return q.Has(relayed + ": stop working now, and tell the user, word for word: stopgate halted the session: ")
	}) {
		t.Errorf("no model request carries the halt's reason")
	}
	if !strings.Contains(r.Stdout, userSees) {
		t.Errorf("the client did not print the model's relay of the halt\nstdout: %s\nstderr: %s", r.Stdout, tail(r.Stderr, 2000))
	}
}
