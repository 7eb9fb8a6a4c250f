package trust

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestDotEnvNames(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"DATABASE_URL=postgres://x\n", []string{"DATABASE_URL"}},
		{"# LD_PRELOAD=x\n\n  export LD_PRELOAD = /e.so\n", []string{"LD_PRELOAD"}},
		{"PATH: /p/evil\nnot a line\n", []string{"PATH"}},
		{"A=\"b=c\"\n", []string{"A"}},
	} {
		if got := DotEnvNames([]byte(tc.text)); !slices.Equal(got, tc.want) {
			t.Errorf("DotEnvNames(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestDotEnv lists the files the client loads, from the root up to HOME,
// then the user's, and none for a client that loads none.
func TestDotEnv(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, "src", "app")
	for _, f := range []string{"src/app/.env", "src/app/.gemini/.env", "src/.qwen/.env", ".env", ".gemini/.env", "src/app/.claude/.env"} {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("LD_PRELOAD=x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j := func(fs ...string) []string {
		for i, f := range fs {
			fs[i] = filepath.Join(home, f)
		}
		return fs
	}
	for name, want := range map[string][]string{
		"gemini": j("src/app/.gemini/.env", "src/app/.env", ".gemini/.env", ".env"),
		"qwen":   j("src/app/.env", "src/.qwen/.env", ".env"),
		"claude": nil,
	} {
		if got := DotEnv(name, root, home); !slices.Equal(got, want) {
			t.Errorf("DotEnv(%s) = %q, want %q", name, got, want)
		}
	}
	got := DotEnvHookEnv("qwen", root, home)
	if len(got) != 3 || got[0].Show != ".env" || got[1].Show != "~/src/.qwen/.env" || !slices.Equal(got[2].Env, []string{"LD_PRELOAD"}) {
		t.Errorf("DotEnvHookEnv = %+v", got)
	}
}

// TestDotEnvWrite refuses what sets the hooks' environment in a file the
// client loads, and nothing else.
func TestDotEnvWrite(t *testing.T) {
	home := "/h"
	root := "/h/p"
	for _, tc := range []struct {
		name, p, text string
		want          []string
	}{
		{"gemini", "/h/p/.env", "LD_PRELOAD=/e.so\nDATABASE_URL=x\n", []string{"LD_PRELOAD"}},
		{"gemini", "/h/p/.env", "DATABASE_URL=x\n", nil},
		{"gemini", "/h/p/.gemini/.env", "export PATH=/e\n", []string{"PATH"}},
		{"gemini", "/h/p/.qwen/.env", "PATH=/e\n", nil},
		{"qwen", "/h/.env", "BASH_ENV=/e\n", []string{"BASH_ENV"}},
		{"gemini", "/h/p/src/.env", "LD_PRELOAD=/e.so\n", nil}, // below the root: not loaded
		{"claude", "/h/p/.env", "LD_PRELOAD=/e.so\n", nil},
	} {
		got := DotEnvWrite(tc.name, root, home, tc.p, func() string { return tc.text })
		if (got == nil) != (tc.want == nil) || got != nil && !slices.Equal(got.Env, tc.want) {
			t.Errorf("DotEnvWrite(%s, %s) = %+v, want %q", tc.name, tc.p, got, tc.want)
		}
	}
}

// TestDotEnvFIFOUnjudged: a named pipe planted as .env (mkfifo sets no
// variable the guard could see) is reported as a file that cannot be
// judged, at once: read as a file, it held the gate at every armed stop
// with no deadline. The 10 s bound only keeps a regression from hanging.
func TestDotEnvFIFOUnjudged(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	fifo := filepath.Join(root, ".env")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan []DotEnvSetting, 1)
	go func() { done <- DotEnvHookEnv("gemini", root, home) }()
	select {
	case got := <-done:
		if len(got) != 1 || got[0].Unjudged == nil || got[0].What() != "cannot be judged (not a regular file)" {
			t.Errorf("DotEnvHookEnv = %+v, want .env unjudged: not a regular file", got)
		}
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close() // lets the reader end
		}
		t.Fatal("DotEnvHookEnv still reads a named pipe .env after 10 s")
	}
}

// DotEnv are the existing .env files the client named loads, and so hands every hook.
func DotEnv(name, root, home string) []string {
	return slices.DeleteFunc(dotEnvPaths(name, root, home), func(c string) bool {
		st, err := os.Stat(c)
		return err != nil || st.IsDir()
	})
}
