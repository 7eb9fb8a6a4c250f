package config

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// cachedConfigs are configs whose cached answers must equal Parse's:
// shared command names, prompts_dir spellings, every settings kind.
var cachedConfigs = map[string]string{
	"telemetry": `
[telemetry]
enabled = true
endpoint = "http://127.0.0.1:4318"
headers_env = "OTLP_HEADERS"
timeout = "3s"
resource = { "team" = "a" }

[[mapping]]
prompt = "p"
validators = ["v"]

[validators.v]
run = "true"
`,
	"example": `
[settings]
announce = false
on_failure = "halt"
max_blocks = 2
protect = []
confine = false

[[mapping]]
prompt = "joke"
validators = ["joke-file", "joke-short"]

[[mapping]]
prompt = "git/worktrees/create"
validators = ["worktree"]

[validators.joke-file]
file = "output/joke.txt"
fix  = "Write the joke to output/joke.txt."

[validators.joke-short]
file         = "output/joke.txt"
regex        = "^.{1,280}$"
not_contains = "TODO"
contains     = "a"

[validators.worktree]
run     = "validators/validate-worktree.sh"
timeout = "10s"
`,
	"shared-command": `
[settings]
prompts_dir = "./prompts/"
protect = ["secrets", "more"]
confine = true

[[mapping]]
prompt = "a/b"
validators = ["v"]

[[mapping]]
prompt = "a-b"
validators = ["w", "v"]

[[mapping]]
prompt = "a"
validators = ["w"]

[validators.w]
run = "true"

[validators.v]
file = "x"
`,
	"prompts-at-root": `
[settings]
prompts_dir = "."
state_dir = "st"

[[mapping]]
prompt = "-/x"
validators = ["v"]

[[mapping]]
prompt = "x"
validators = ["v"]

[validators.v]
file = "x"
`,
	"commands-dir": `
[settings]
prompts_dir = ".claude/commands"

[[mapping]]
prompt = "p"
validators = ["v"]

[[mapping]]
prompt = "q/r"
validators = ["v"]

[validators.v]
file = "x"
`,
	"many": manyMappings(300),
}

func manyMappings(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "[[mapping]]\nprompt = \"p/%04d\"\nvalidators = [\"v%04d\", \"common\"]\n\n", i, i)
	}
	b.WriteString("[validators.common]\nrun = \"true\"\n\n")
	for i := range n {
		fmt.Fprintf(&b, "[validators.v%04d]\nfile = \"out/%04d.txt\"\nregex = \"^ok-%04d$\"\nfix = \"fix %d\"\n\n", i, i, i, i)
	}
	return b.String()
}

// queries returns the paths and commands worth asking of cfg: every key it
// indexes, near misses, and strangers.
func queries(cfg *Config) (paths, commands []string) {
	for _, m := range cfg.Mappings {
		for _, p := range cfg.Files(m.Prompt) {
			paths = append(paths, p, p+"x", strings.TrimSuffix(p, ".md"), "x/"+p)
		}
		for _, d := range cfg.Commands(m.Prompt) {
			commands = append(commands, d, d+"-", d+":")
		}
		commands = append(commands, m.Prompt)
	}
	paths = append(paths, "", "README.md", "src/prompts/joke.md", "zzz", "\x00", "~")
	commands = append(commands, "", "joke", "zzz", "\x00", "~")
	return paths, commands
}

func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	file := filepath.Join(dir, "mappings.toml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func loadCached(t *testing.T, file, root string) *Config {
	t.Helper()
	c, err := Load(file, root)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sameAnswers checks that every lookup of c answers as cfg does.
func sameAnswers(t *testing.T, c *Config, cfg *Config) {
	t.Helper()
	if !reflect.DeepEqual(c.Settings, cfg.Settings) {
		t.Errorf("settings: got %+v, want %+v", c.Settings, cfg.Settings)
	}
	paths, commands := queries(cfg)
	for _, p := range paths {
		got, err := c.MatchPath(p)
		if err != nil {
			t.Fatalf("MatchPath(%q): %v", p, err)
		}
		if want, _ := cfg.MatchPath(p); !sameMappings(got, want) {
			t.Errorf("MatchPath(%q) = %s, want %s", p, show(got), show(want))
		}
	}
	for _, d := range commands {
		got, err := c.MatchCommand(d)
		if err != nil {
			t.Fatalf("MatchCommand(%q): %v", d, err)
		}
		if want, _ := cfg.MatchCommand(d); !sameMappings(got, want) {
			t.Errorf("MatchCommand(%q) = %s, want %s", d, show(got), show(want))
		}
	}
	for _, name := range append(cfg.Order, "nope", "") {
		got, err := c.Validator(name)
		if err != nil {
			t.Fatalf("Validator(%q): %v", name, err)
		}
		want := cfg.Validators[name]
		if (got == nil) != (want == nil) || got != nil && describe(got) != describe(want) {
			t.Errorf("Validator(%q) = %+v, want %+v", name, got, want)
		}
	}
}

// describe shows every field of v.
func describe(v *Validator) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%d", v.Name, v.File, v.Run, v.Contains, v.NotContains, v.Regex, v.Timeout, v.Fix, v.Line)
}

func sameMappings(got, want []*Mapping) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !reflect.DeepEqual(*got[i], *want[i]) {
			return false
		}
	}
	return true
}

func show(ms []*Mapping) string {
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%+v", *m))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func TestCacheAnswersAsParse(t *testing.T) {
	for name, text := range cachedConfigs {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			file := writeConfig(t, root, text)
			cfg, err := loadFile(file, root)
			if err != nil {
				t.Fatal(err)
			}
			miss := loadCached(t, file, root)
			sameAnswers(t, miss, cfg)

			// From the cache, without parsing.
			hit := loadCached(t, file, root)
			if hit.cached == nil {
				t.Fatal("second load did not come from the cache")
			}
			sameAnswers(t, hit, cfg)
			if hit.cached == nil {
				t.Fatal("a lookup fell back to parsing a sound cache")
			}
			if !reflect.DeepEqual(hit.Telemetry, cfg.Telemetry) { // the stop exports by it
				t.Errorf("Telemetry = %+v, want %+v", hit.Telemetry, cfg.Telemetry)
			}
			if got := hit.StateDir(); got != cfg.StateDir() {
				t.Errorf("StateDir() = %s, want %s", got, cfg.StateDir())
			}
			full, err := hit.Full()
			if err != nil || !reflect.DeepEqual(full.Mappings, cfg.Mappings) {
				t.Errorf("Full() = %v, %v", full, err)
			}
		})
	}
}

func cacheFiles(t *testing.T, root string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, DefaultStateDir, CacheDir, "*"))
	return files
}

func TestCacheNeverStale(t *testing.T) {
	// The config is rewritten within the same clock tick as the cache, with
	// the same size: a stat could not tell the texts apart.
	root := t.TempDir()
	a := "[[mapping]]\nprompt = \"aaaa\"\nvalidators = [\"v\"]\n[validators.v]\nfile = \"x\"\n"
	b := strings.Replace(a, "aaaa", "bbbb", 1) // same size
	file := writeConfig(t, root, a)
	for i := range 20 {
		text, want, gone := a, "aaaa", "bbbb"
		if i%2 == 1 {
			text, want, gone = b, "bbbb", "aaaa"
		}
		writeConfig(t, root, text)
		c := loadCached(t, file, root)
		if ms, _ := c.MatchCommand(want); len(ms) != 1 {
			t.Fatalf("load %d: /%s not mapped: stale cache", i, want)
		}
		if ms, _ := c.MatchCommand(gone); len(ms) != 0 {
			t.Fatalf("load %d: /%s still mapped: stale cache", i, gone)
		}
	}
	if files := cacheFiles(t, root); len(files) != 1 {
		t.Errorf("cache files: %v, want one", files)
	}
}

func TestCacheOtherText(t *testing.T) {
	root := t.TempDir()
	file := writeConfig(t, root, cachedConfigs["example"])
	loadCached(t, file, root)
	for _, text := range []string{cachedConfigs["commands-dir"], cachedConfigs["shared-command"]} {
		os.Remove(file)
		writeConfig(t, root, text)
		cfg, err := loadFile(file, root)
		if err != nil {
			t.Fatal(err)
		}
		sameAnswers(t, loadCached(t, file, root), cfg)
	}
}

// TestCacheStatMatchNotTrusted is a config rewritten with another text of
// the same size, its times set back: every stat field but the change time
// matches the text the cache was built from. The cache must not answer.
func TestCacheStatMatchNotTrusted(t *testing.T) {
	root := t.TempDir()
	a := "[[mapping]]\nprompt = \"aaaa\"\nvalidators = [\"v\"]\n[validators.v]\nfile = \"x\"\n"
	b := strings.Replace(a, "aaaa", "bbbb", 1)
	file := writeConfig(t, root, a)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(file, old, old)
	loadCached(t, file, root)
	if err := os.WriteFile(file, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(file, old, old)
	c := loadCached(t, file, root)
	if ms, _ := c.MatchCommand("aaaa"); len(ms) != 0 {
		t.Fatal("the old text's cache answered for the new text")
	}
	if ms, _ := c.MatchCommand("bbbb"); len(ms) != 1 {
		t.Fatal("the new text's mapping is missing")
	}
}

func TestCacheCorruptionNeverWrong(t *testing.T) {
	root := t.TempDir()
	file := writeConfig(t, root, cachedConfigs["shared-command"])
	cfg, err := loadFile(file, root)
	if err != nil {
		t.Fatal(err)
	}
	loadCached(t, file, root)
	files := cacheFiles(t, root)
	if len(files) != 1 {
		t.Fatalf("cache files: %v", files)
	}
	good, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	damage := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(files[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(file, root)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameAnswers(t, c, cfg)
		if t.Failed() {
			t.Fatalf("wrong answers from a cache with %s", name)
		}
	}
	for i := range good {
		data := append([]byte(nil), good...)
		data[i] ^= 1 << (i % 8)
		damage(fmt.Sprintf("byte %d flipped", i), data)
	}
	for n := 0; n < len(good); n += 3 {
		damage(fmt.Sprintf("length %d", n), good[:n])
	}
	damage("garbage", []byte(strings.Repeat("SGIX garbage ", 100)))
}

func TestCacheNeverHoldsBadConfig(t *testing.T) {
	root := t.TempDir()
	file := writeConfig(t, root, "[[mapping]]\nprompt = \"x\"\nvalidators = [\"undefined\"]\n")
	for range 2 {
		if _, err := Load(file, root); err == nil {
			t.Fatal("a config with mistakes loaded")
		}
	}
	if files := cacheFiles(t, root); len(files) != 0 {
		t.Errorf("cache files for a bad config: %v", files)
	}
}

func TestCacheKeyedByBlockCap(t *testing.T) {
	root := t.TempDir()
	file := writeConfig(t, root, "[settings]\nmax_blocks = 6\n[[mapping]]\nprompt = \"x\"\nvalidators = [\"v\"]\n[validators.v]\nfile = \"x\"\n")
	t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "")
	loadCached(t, file, root)
	t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "5")
	if _, err := Load(file, root); err == nil {
		t.Fatal("max_blocks = 6 loaded from the cache under a block cap of 5")
	}
}

func TestCacheCustomStateDir(t *testing.T) {
	root := t.TempDir()
	text := "[settings]\nstate_dir = \".state\" # here\n" + cachedConfigs["many"]
	file := writeConfig(t, root, text)
	loadCached(t, file, root)
	files, _ := filepath.Glob(filepath.Join(root, ".state", CacheDir, "*.idx"))
	if len(files) != 1 {
		t.Fatalf("cache files under .state: %v", files)
	}
	if _, err := os.Stat(filepath.Join(root, DefaultStateDir)); err == nil {
		t.Error("the default state dir was created for a config that moves it")
	}
	if c := loadCached(t, file, root); c.cached == nil {
		t.Error("the cache under a custom state dir was not used")
	}
}

// TestCacheCustomStateDirAnySpelling is a state dir named in a way only
// the decoder reads: the cache is found there all the same.
func TestCacheCustomStateDirAnySpelling(t *testing.T) {
	root := t.TempDir()
	file := writeConfig(t, root, "settings.state_dir = \".dotted\"\n"+cachedConfigs["many"])
	loadCached(t, file, root)
	if files, _ := filepath.Glob(filepath.Join(root, ".dotted", CacheDir, "*.idx")); len(files) != 1 {
		t.Fatalf("cache files: %v", files)
	}
	if c := loadCached(t, file, root); c.cached == nil {
		t.Error("the cache was not used")
	}
}

// TestCacheKey checks that the key is the text's SHA-256 however the
// config was loaded: parsed (a miss), from the cache, or parsed again
// when the cache turns out corrupt.
func TestCacheKey(t *testing.T) {
	root := t.TempDir()
	text := cachedConfigs["example"]
	file := writeConfig(t, root, text)
	want := sha256.Sum256([]byte(text))
	if c := loadCached(t, file, root); c.cached != nil || c.Key() != want {
		t.Errorf("miss: parsed %v, key %x", c.cached == nil, c.Key())
	}
	hit := loadCached(t, file, root)
	if hit.cached == nil || hit.Key() != want {
		t.Errorf("hit: parsed %v, key %x", hit.cached == nil, hit.Key())
	}
	if _, err := hit.Full(); err != nil || hit.Key() != want {
		t.Errorf("after a parse: %v, key %x", err, hit.Key())
	}
}

func TestCacheWriteIsBestEffort(t *testing.T) {
	root := t.TempDir()
	file := writeConfig(t, root, cachedConfigs["example"])
	// The cache folder cannot be made: the load still answers.
	state := filepath.Join(root, DefaultStateDir)
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, CacheDir), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := loadCached(t, file, root)
	if ms, err := c.MatchCommand("joke"); err != nil || len(ms) != 1 {
		t.Fatalf("MatchCommand(joke) = %v, %v", ms, err)
	}
}

func TestCacheSweepsStaleTemps(t *testing.T) {
	root := t.TempDir()
	file := writeConfig(t, root, cachedConfigs["example"])
	dir := filepath.Join(root, DefaultStateDir, CacheDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stale, fresh := filepath.Join(dir, ".tmp-killed"), filepath.Join(dir, ".tmp-writing")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("SGIX"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * staleTemp)
	if err := os.Chtimes(stale, long, long); err != nil {
		t.Fatal(err)
	}
	loadCached(t, file, root) // a miss: writes the cache
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a temp file left by a killed writer was not swept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a temp file another writer may still be writing was swept")
	}
}

// loadFile is Parse on a file's text, for tests.
func loadFile(file, root string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(data, file, root)
}

// TestCacheRewrittenAfterLoad is a cache rewritten for another text
// between a load and its lookups: the lookups answer for the loaded text,
// as a parsed config does, from the file the load opened.
func TestCacheRewrittenAfterLoad(t *testing.T) {
	root := t.TempDir()
	a := "[[mapping]]\nprompt = \"aaaa\"\nvalidators = [\"v\"]\n[validators.v]\nfile = \"x\"\n"
	b := strings.Replace(a, "aaaa", "bbbb", 1)
	file := writeConfig(t, root, a)
	loadCached(t, file, root)
	hit := loadCached(t, file, root)
	if hit.cached == nil {
		t.Fatal("second load did not come from the cache")
	}
	writeConfig(t, root, b)
	loadCached(t, file, root) // a miss: the cache now holds b's records
	if ms, err := hit.MatchCommand("aaaa"); err != nil || len(ms) != 1 || hit.cached == nil {
		t.Fatalf("MatchCommand(aaaa) = %v, %v, cached %v: want a's mapping, from the cache loaded", ms, err, hit.cached != nil)
	}
	if ms, _ := hit.MatchCommand("bbbb"); len(ms) != 0 {
		t.Fatalf("MatchCommand(bbbb) = %v: b's records answered for a's text", ms)
	}
	if hit.Key() != sha256.Sum256([]byte(a)) {
		t.Error("the key is not the loaded text's")
	}
}
