package config

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// FuzzParseConfig: whatever mappings.toml holds, Parse never panics; every
// error is Problems, each naming the file, a line inside it and a message;
// and a config that loads is consistent: settings in range, each validator
// one kind, each mapping's prompt clean and its validators defined, and the
// index finding exactly the mappings whose paths and commands it holds,
// and the state dir read without parsing the one it names.
// Seeds: the example project's file and the catalogue's mistakes, in
// testdata/fuzz/FuzzParseConfig.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(catalogueBase))
	for _, c := range catalogue() {
		f.Add([]byte(c.toml))
	}
	if data, err := os.ReadFile("../../mappings.toml"); err == nil {
		f.Add(data)
	}
	blockCap := BlockCap(os.Getenv)
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "/p/mappings.toml", "/p")
		if err != nil {
			checkProblems(t, data, err)
			return
		}
		checkSettings(t, cfg.Settings, blockCap)
		checkValidators(t, cfg)
		checkMappings(t, cfg)
		checkIndex(t, cfg)
		checkStateDir(t, data, cfg)
	})
}

func checkProblems(t *testing.T, data []byte, err error) {
	var ps Problems
	if !errors.As(err, &ps) || len(ps.Errors()) == 0 {
		t.Fatalf("error is not Problems: %T %v", err, err)
	}
	n := strings.Count(string(data), "\n") + 1
	for _, p := range ps {
		if p.File != "mappings.toml" {
			t.Fatalf("problem names file %q: %s", p.File, p.Error())
		}
		if p.Line < 1 || p.Line > n {
			t.Fatalf("line %d outside the file's %d lines: %s", p.Line, n, p.Error())
		}
		if p.Msg == "" {
			t.Fatalf("problem without a message: %+v", p)
		}
	}
}

func checkSettings(t *testing.T, s Settings, blockCap int) {
	if s.PromptsDir == "" || s.StateDir == "" || s.Timeout <= 0 || s.OutputLines < 1 ||
		s.MaxBlocks < 1 || s.MaxBlocks >= blockCap || (s.OnFailure != OnFailureBlock && s.OnFailure != OnFailureHalt) {
		t.Fatalf("settings out of range: %+v", s)
	}
}

func checkValidators(t *testing.T, cfg *Config) {
	if len(cfg.Order) != len(cfg.Validators) {
		t.Fatalf("order %v does not list the %d validators", cfg.Order, len(cfg.Validators))
	}
	for _, name := range cfg.Order {
		v := cfg.Validators[name]
		switch {
		case v == nil || v.Name != name:
			t.Fatalf("validator %q: %+v", name, v)
		case (v.File == "") == (v.Run == ""):
			t.Fatalf("validator %q is not exactly one of file and run: %+v", name, v)
		case v.Run != "" && (v.Contains != "" || v.NotContains != "" || v.Regex != ""):
			t.Fatalf("run validator %q has expectations: %+v", name, v)
		case v.Regex != "" && compiles(v.Regex) == nil:
			t.Fatalf("validator %q: regex not compiled", name)
		case v.Timeout <= 0:
			t.Fatalf("validator %q: timeout %v", name, v.Timeout)
		}
	}
}

func checkMappings(t *testing.T, cfg *Config) {
	seen := map[string]bool{}
	for _, m := range cfg.Mappings {
		if msg, _ := badPromptKey(m.Prompt); msg != "" {
			t.Fatalf("mapping loaded with a bad key: %s", msg)
		}
		if seen[m.Prompt] {
			t.Fatalf("prompt %q mapped twice", m.Prompt)
		}
		seen[m.Prompt] = true
		if len(m.Validators) == 0 {
			t.Fatalf("mapping %q without validators", m.Prompt)
		}
		for _, name := range m.Validators {
			if cfg.Validators[name] == nil {
				t.Fatalf("mapping %q names undefined validator %q", m.Prompt, name)
			}
		}
	}
}

// checkIndex: every path and command of a mapping finds it, and whatever a
// path or command finds has that path or command.
func checkIndex(t *testing.T, cfg *Config) {
	for i := range cfg.Mappings {
		m := &cfg.Mappings[i]
		for _, p := range cfg.Files(m.Prompt) {
			if k, _ := KeyOf(cfg.Settings.PromptsDir, p); k == "" {
				t.Fatalf("KeyOf(%q) is empty, but %q names it", p, m.Prompt)
			}
			found, _ := cfg.MatchPath(p)
			if !slices.Contains(found, m) {
				t.Fatalf("MatchPath(%q) misses mapping %q", p, m.Prompt)
			}
			for _, o := range found {
				if !slices.Contains(cfg.Files(o.Prompt), p) {
					t.Fatalf("MatchPath(%q) finds mapping %q, whose files are %v", p, o.Prompt, cfg.Files(o.Prompt))
				}
			}
		}
		for _, d := range cfg.Commands(m.Prompt) {
			found, _ := cfg.MatchCommand(d)
			if !slices.Contains(found, m) {
				t.Fatalf("MatchCommand(%q) misses mapping %q", d, m.Prompt)
			}
			for _, o := range found {
				if !slices.Contains(cfg.Commands(o.Prompt), d) {
					t.Fatalf("MatchCommand(%q) finds mapping %q", d, o.Prompt)
				}
			}
		}
		if cfg.Mapping(m.Prompt) != m {
			t.Fatalf("Mapping(%q) is not the mapping", m.Prompt)
		}
	}
}
