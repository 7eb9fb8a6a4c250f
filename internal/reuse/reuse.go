// Package reuse takes a run validator that passed earlier in the scope as passed while its spec, program and
// inputs are unchanged, from a sealed record the Policy trusts; any doubt runs it. See docs/security.md.
package reuse

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/validator"
)

// Use is whether a stop reuses passes (On, asked only if needed; nil: off), its scope, and whether under the default policy.
type Use struct {
	On      func() bool
	Trusted bool
	Scope   queue.Scope
}

// Unchanged is a check taken as passed, not run: it passed at Since, in a run of Duration.
type Unchanged struct {
	Since    time.Time
	Duration time.Duration
}

// Stop is one stop's reuse: the record, the tree before any validator runs, the run validators' keys.
type Stop struct {
	cfg    *config.Config
	vs     []*config.Validator
	seal   []byte // the record's key
	rec    *record
	tree   *Tree
	opts   Options
	keys   []*key       // nil: it runs
	reused []*Unchanged // nil: it runs
	use    Use          // Trusted: the default policy, which writes only after confined runs
	now    time.Time
}

// Start reads the scope's record, fingerprints what the run validators depend on within half the time to by
// (zero: no bound), and returns per validator nil when it must run, else since when it is unchanged.
func Start(cfg *config.Config, u Use, vs []*config.Validator, specs []validator.Spec, by time.Time) (*Stop, []*Unchanged) {
	r := &Stop{cfg: cfg, vs: vs, keys: make([]*key, len(vs)), use: u, now: time.Now()}
	want, anyRun := wanted(vs)
	if !anyRun || u.On == nil || !u.On() {
		return r, r.toRun()
	}
	seal, err := sealKey(cfg.StateDir())
	if err != nil {
		return r, r.toRun()
	}
	r.seal, r.rec = seal, loadRecord(cfg.StateDir(), u.Scope, seal)
	r.opts = Options{Skip: []string{cfg.StateDir()}, Want: want, Cache: filepath.Join(cfg.StateDir(), recordDir, "stat-cache")}
	if !by.IsZero() {
		by = r.now.Add(by.Sub(r.now) / 2) // the validators keep the other half
	}
	r.tree, _ = r.take(by)
	for i, v := range vs {
		if v.Run != "" && r.tree != nil {
			if k, err := r.key(v, specs[i], r.tree); err == nil {
				r.keys[i] = &k
			}
		}
	}
	return r, r.toRun()
}

// take fingerprints the tree, giving up at by (zero: no bound).
func (r *Stop) take(by time.Time) (*Tree, error) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if !by.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, by)
	}
	defer cancel()
	return Take(ctx, r.cfg.Root, r.opts)
}

// toRun says, for each validator, nil when it must run, else since when it is unchanged.
func (r *Stop) toRun() []*Unchanged {
	r.reused = make([]*Unchanged, len(r.vs))
	if r.rec == nil {
		return r.reused
	}
	for i, v := range r.vs {
		prev, ok := r.rec.Validators[v.Name]
		if r.keys[i] != nil && ok && !prev.Passed.After(r.now) && prev.key == *r.keys[i] {
			r.reused[i] = &Unchanged{Since: prev.Passed, Duration: time.Duration(prev.DurationMS * float64(time.Millisecond))}
		}
	}
	return r.reused
}

// key is what the validator's verdict depends on in tree.
func (r *Stop) key(v *config.Validator, s validator.Spec, tree *Tree) (key, error) {
	match, err := inputs(v)
	if err != nil {
		return key{}, err
	}
	prog, err := programHash(v.Run, r.cfg.Root)
	return key{Spec: specHash(r.cfg, v, s), Program: prog, Inputs: tree.Sum(match)}, err
}

// inputs matches the files v's inputs patterns select (nil: every file).
func inputs(v *config.Validator) (func(string) bool, error) {
	ps, err := v.Patterns()
	if ps == nil || err != nil {
		return nil, err
	}
	return ps.Match, nil
}

// hashJSON is the SHA-256 of v's JSON (maps by sorted keys).
func hashJSON(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// specHash hashes what the stop runs of v: the whole Validator but fix and line, its variables, its confinement.
func specHash(cfg *config.Config, v *config.Validator, s validator.Spec) string {
	def := *v
	def.Fix, def.Line = "", 0
	return hashJSON(struct {
		Validator     config.Validator
		Confine, Root string
		Env           []string
	}{def, cfg.Settings.Confine, cfg.Root, s.Env})
}

// programHash hashes the run line's inputs (config.RunInputs); an unreadable program is an error.
func programHash(run, root string) (string, error) {
	in := config.Inputs{}
	if config.RunInputs(in, run, root, math.MaxInt64) {
		return "", fmt.Errorf("a program of %q cannot be read", run)
	}
	return hashJSON(in), nil
}

// wanted selects the files the run validators' inputs select (nil: all); any: there is a run validator.
func wanted(vs []*config.Validator) (want func(string) bool, any bool) {
	var sets []*pattern.Set
	for _, v := range vs {
		if v.Run == "" {
			continue
		}
		any = true
		ps, err := v.Patterns()
		if err != nil || ps == nil {
			return nil, true // the whole tree
		}
		sets = append(sets, ps)
	}
	return func(rel string) bool {
		return slices.ContainsFunc(sets, func(ps *pattern.Set) bool { return ps.Match(rel) })
	}, any
}

// record is a scope's passed run validators and what each depended on, sealed (HMAC) against copies, edits and tears.
type record struct {
	Session    string          `json:"session_id"`
	Agent      string          `json:"agent_id,omitempty"`
	Validators map[string]pass `json:"validators"`
	MAC        string          `json:"mac"`
}

// pass is one validator's last pass in the scope.
type pass struct {
	key
	Passed     time.Time `json:"passed"`
	DurationMS float64   `json:"duration_ms"`
}

// key is what a verdict depended on: spec, program, inputs.
type key struct {
	Spec    string `json:"spec"`
	Program string `json:"program"`
	Inputs  string `json:"inputs"`
}

const recordDir = "reuse"

func recordPath(stateDir string, scope queue.Scope) string {
	sum := sha256.Sum256([]byte(scope.Session + "\x00" + scope.Agent))
	return filepath.Join(stateDir, recordDir, hex.EncodeToString(sum[:16])+".json")
}

// sealKey reads the state dir's key, making it when there is none.
func sealKey(stateDir string) ([]byte, error) {
	path := filepath.Join(stateDir, recordDir, "key")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		key := make([]byte, 32)
		rand.Read(key)
		_, err = f.Write(key)
		if cerr := f.Close(); err != nil || cerr != nil {
			return nil, errors.Join(err, cerr)
		}
	}
	key, err := os.ReadFile(path)
	if err == nil && len(key) != 32 {
		err = errors.New("reuse key: malformed")
	}
	return key, err
}

// seal is the record's MAC under key, over its JSON without the MAC.
func (r record) seal(key []byte) string {
	r.MAC = ""
	b, _ := json.Marshal(r)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// loadRecord reads the scope's record; nil when there is none or it fails a check.
func loadRecord(stateDir string, scope queue.Scope, key []byte) *record {
	var r record
	if queue.ReadJSON(recordPath(stateDir, scope), &r) != nil || r.Session != scope.Session || r.Agent != scope.Agent ||
		!hmac.Equal([]byte(r.MAC), []byte(r.seal(key))) {
		return nil
	}
	return &r
}

// Finish records the passes whose inputs stayed still while they ran; under the default policy an unconfined run removes the record. Past by, nothing is recorded.
func (r *Stop) Finish(results []validator.Result, by time.Time) {
	if r.seal == nil || r.tree == nil {
		return
	}
	path := recordPath(r.cfg.StateDir(), r.use.Scope)
	for i := range r.vs {
		if r.ran(i) && r.use.Trusted && !results[i].Confined {
			os.Remove(path)
			return
		}
	}
	after, err := r.take(by)
	if err != nil {
		return // the passes on record stand; this stop's are not recorded
	}
	next := record{Session: r.use.Scope.Session, Agent: r.use.Scope.Agent, Validators: map[string]pass{}}
	if r.rec != nil {
		maps.Copy(next.Validators, r.rec.Validators)
	}
	for i, v := range r.vs {
		if !r.ran(i) {
			continue
		}
		delete(next.Validators, v.Name)
		if k := r.still(i, after); k != nil && results[i].Passed {
			next.Validators[v.Name] = pass{key: *k, Passed: r.now.UTC(), DurationMS: outcome.Millis(results[i].Duration)}
		}
	}
	next.MAC = next.seal(r.seal)
	if err := queue.WriteJSON(path, next); err != nil {
		os.Remove(path) // a record half right is no record
	}
}

// still is validator i's key when its program and inputs in after are as before the run; else nil.
func (r *Stop) still(i int, after *Tree) *key {
	k := r.keys[i]
	if k == nil {
		return nil
	}
	match, _ := inputs(r.vs[i])
	if prog, err := programHash(r.vs[i].Run, r.cfg.Root); err != nil || prog != k.Program || !r.tree.Still(after, match) {
		return nil
	}
	return k
}

// ran is whether validator i is a run validator that ran this stop.
func (r *Stop) ran(i int) bool { return r.vs[i].Run != "" && r.reused[i] == nil }

// Policy says whether reuse is on for client's stops, and why: per [settings] reuse, else only behind Claude Code's OS wall with run validators confined.
func Policy(cfg *config.Config, client, home string) (on bool, why string) {
	switch cfg.Settings.Reuse {
	case config.ReuseOff:
		return false, "off ([settings] reuse = false)"
	case config.ReuseOn:
		return true, "on ([settings] reuse = true: the record is trusted even where the agent could write the state dir)"
	}
	if client != "claude" {
		return false, "off: the state dir is not walled off from " + client + "'s agent (set [settings] reuse = true to reuse anyway)"
	}
	if cfg.Settings.Confine == config.ConfineOff {
		return false, "off: run validators are not confined (confine = false), so the code they run could write the record (set [settings] reuse = true to reuse anyway)"
	}
	var texts [][]byte // Claude Code's settings files; nil for one missing or not regular
	for _, f := range guard.ClaudeSettings(cfg.Root, home) {
		data, _ := regular.ReadFile(f.Path, math.MaxInt64)
		texts = append(texts, data)
	}
	rule := settings.DenyRule(filepath.ToSlash(cfg.Root), filepath.ToSlash(home), filepath.ToSlash(cfg.StateDir()), true)
	if walled, missing := settings.Walled(texts, rule); !walled {
		return false, "off: the OS wall is not up around the state dir (" + missing + "); set [settings] reuse = true to reuse anyway"
	}
	if p := cfg.Settings.Protect; p != nil && len(p) == 0 && cfg.Settings.Confine != config.ConfineOn {
		return false, "off: protect = [] leaves run validators unconfined, so the code they run could write the record (set [settings] reuse = true to reuse anyway)"
	}
	if _, err := validator.Bwrap(); err != nil {
		return false, "off: run validators cannot be confined here (" + err.Error() + "), so the code they run could write the record (set [settings] reuse = true to reuse anyway)"
	}
	return true, "on: the OS wall keeps the agent from writing the state dir, where the record is"
}

// Lines tells w, per client, whether a stop reuses passes and why; nothing without run validators.
func Lines(w io.Writer, cfg *config.Config, home string, clients []string) {
	if cfg == nil {
		return
	}
	if runs, err := cfg.Runs(); err == nil && len(runs) == 0 {
		return // unknown: told as if it had
	}
	for _, n := range clients {
		_, why := Policy(cfg, n, home)
		fmt.Fprintln(w, "reuse of unchanged passes"+map[bool]string{true: " (" + n + ")"}[len(clients) > 1]+": "+why)
	}
}

// File is one file of the tree.
type File struct {
	Path string // relative to the root, slash-separated
	Kind byte   // 'f' a file, 'x' an executable file, 'l' a symbolic link
	Sum  [sha256.Size]byte
	st   regular.Stamp // as it was hashed: a file rewritten or swapped since shows here
}

// Tree is the working tree's files sorted by path, hashed: all but .git and the skipped, ignoring no rule.
type Tree struct {
	Files []File
}

// Options says what Take lists and where its cache is.
type Options struct {
	Skip  []string              // directories left out (absolute)
	Want  func(rel string) bool // nil: every file; else the files hashed
	Cache string                // the stat cache's path (never git's index); "": hash every file
}

// ErrClock is a stat cache written after now: no recorded stat or pass can be trusted.
var ErrClock = errors.New("the clock went backwards")

// Take lists and hashes the tree at root; an unreadable file or ctx done first is an error: nothing is reused.
func Take(ctx context.Context, root string, o Options) (*Tree, error) {
	now := time.Now()
	files, linkedDirs, err := baseline.Walk(ctx, root, o.Skip, nil)
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	paths := slices.DeleteFunc(append(files, linkedDirs...), func(rel string) bool {
		return path.Base(rel) == ".git" // a linked worktree's or a submodule's pointer file
	})
	c, err := loadCache(o.Cache, now)
	if errors.Is(err, ErrClock) {
		return nil, err
	}
	t := &Tree{Files: make([]File, 0, len(paths))}
	next := &cache{Format: cacheFormat, At: now.UnixNano(), Entries: map[string]cached{}}
	var todo []string
	for _, rel := range paths {
		if o.Want == nil || o.Want(rel) {
			todo = append(todo, rel)
		} else if e, ok := c.get(rel); ok {
			next.Entries[rel] = e // for a later stop that wants it; checked then
		}
	}
	hashed, misses, err := hashAll(ctx, root, todo, c)
	if err != nil {
		return nil, err
	}
	for _, f := range hashed {
		if f.Path != "" { // "": gone since the walk listed it
			t.Files = append(t.Files, f)
			next.Entries[f.Path] = cached{St: f.st, Sum: f.Sum}
		}
	}
	slices.SortFunc(t.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	// Unchanged when every file came from the cache and none came or went.
	if o.Cache != "" && (c == nil || misses > 0 || len(next.Entries) != len(c.Entries)) {
		next.save(o.Cache) // a cache not written costs the next stop a rehash, never a wrong answer
	}
	return t, nil
}

// Sum is the fingerprint (paths, kinds, content hashes) of the files match selects (nil: all).
func (t *Tree) Sum(match func(rel string) bool) string {
	h := sha256.New()
	for _, f := range t.Files {
		if match == nil || match(f.Path) {
			h.Write([]byte(f.Path))
			h.Write([]byte{0, f.Kind})
			h.Write(f.Sum[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Still tells whether the files match selects (nil: all) are in u as in t, stat and all (a swap shows in ctime).
func (t *Tree) Still(u *Tree, match func(rel string) bool) bool {
	sel := func(fs []File) []File {
		return slices.DeleteFunc(slices.Clone(fs), func(f File) bool { return match != nil && !match(f.Path) })
	}
	return slices.Equal(sel(t.Files), sel(u.Files))
}

// hashAll hashes the files a few at a time and counts those not taken from the cache.
func hashAll(ctx context.Context, root string, paths []string, c *cache) ([]File, int, error) {
	out, errs := make([]File, len(paths)), make([]error, len(paths))
	var misses atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, rel := range paths {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f, hit, err := hashFile(ctx, root, rel, c)
			if out[i], errs[i] = f, err; !hit {
				misses.Add(1)
			}
			if errors.Is(errs[i], fs.ErrNotExist) {
				out[i], errs[i] = File{}, nil // deleted since the walk: gone from the tree
			}
		})
	}
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return nil, 0, fmt.Errorf("fingerprint: %w", err)
	}
	return out, int(misses.Load()), nil
}

// hashFile hashes one file, from the cache when its stat is as recorded.
func hashFile(ctx context.Context, root, rel string, c *cache) (File, bool, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil {
		return File{}, false, err
	}
	f := File{Path: rel, Kind: 'f', st: regular.StampOf(fi)}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Kind = 'l'
		target, err := os.Readlink(p)
		f.Sum = sha256.Sum256([]byte(target))
		return f, true, err // no cache to miss: a link's target is its content
	case !fi.Mode().IsRegular():
		return File{}, false, fmt.Errorf("%s: not a regular file", rel)
	case fi.Mode()&0o111 != 0:
		f.Kind = 'x'
	}
	if e, ok := c.get(rel); ok && e.St == f.st {
		f.Sum = e.Sum
		return f, true, nil
	}
	// Through regular: a named pipe swapped in since would hold the open.
	fh, _, err := regular.Open(p)
	if errors.Is(err, regular.ErrNotRegular) {
		return File{}, false, fmt.Errorf("%s: not a regular file", rel)
	}
	if err != nil {
		return File{}, false, err
	}
	defer fh.Close()
	h, buf := sha256.New(), make([]byte, 1<<20)
	for err == nil { // until ctx is done
		var n int
		n, err = fh.Read(buf)
		h.Write(buf[:n])
		err = cmp.Or(err, ctx.Err())
	}
	if err != io.EOF {
		return File{}, false, fmt.Errorf("%s: %w", rel, err)
	}
	copy(f.Sum[:], h.Sum(nil))
	return f, false, nil
}

// racy is how long after a file's change its recorded hash is not trusted (clock granularity).
const racy = int64(time.Second)

// cacheFormat is the cache's format; a file of another is no cache.
const cacheFormat = "stopgate-fingerprint-cache 2"

// cache maps a file's path to its stat and hash as recorded at At (Unix ns); its file is gob.
type cache struct {
	Format  string
	At      int64
	Entries map[string]cached
}

type cached struct {
	St  regular.Stamp
	Sum [sha256.Size]byte
}

// get returns rel's entry when it had not changed for a while when recorded; its stat is the caller's to check.
func (c *cache) get(rel string) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	e, ok := c.Entries[rel]
	return e, ok && e.St.Changed()+racy <= c.At
}

// loadCache reads the cache at path: nil when missing or undecodable, ErrClock when from the future.
func loadCache(path string, now time.Time) (*cache, error) {
	f, err := os.Open(path) // "": none
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	var c cache
	if gob.NewDecoder(f).Decode(&c) != nil || c.Format != cacheFormat {
		return nil, nil
	}
	if c.At > now.UnixNano() {
		return nil, ErrClock
	}
	return &c, nil
}

func (c *cache) save(path string) error {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(c); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), atomicfile.Options{TempPrefix: ".fingerprint-", NoSync: true})
}
