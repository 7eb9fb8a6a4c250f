package regular

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file, fifo := filepath.Join(dir, "f"), filepath.Join(dir, "p")
	if err := os.WriteFile(file, []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want error // nil: opened
	}{
		{"f", nil},
		{"l", nil}, // a link is followed
		{"p", ErrNotRegular},
		{".", ErrNotRegular},
		{"missing", fs.ErrNotExist},
	} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			f, info, err := Open(filepath.Join(dir, c.name))
			switch {
			case c.want == nil && err != nil:
				t.Errorf("%s: %v", c.name, err)
			case c.want == nil:
				data, _ := io.ReadAll(f)
				f.Close()
				if string(data) != "text" {
					t.Errorf("%s: read %q", c.name, data)
				}
			case !errors.Is(err, c.want) || f != nil:
				t.Errorf("%s: %v, %v, want %v", c.name, f, err, c.want)
			case c.want == ErrNotRegular && info == nil:
				t.Errorf("%s: no info with the refusal", c.name)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // a blocking open of the pipe
			t.Fatalf("%s: Open still waiting after 10s", c.name)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	file, big := filepath.Join(dir, "f"), filepath.Join(dir, "big")
	if err := os.WriteFile(file, []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		max  int64
		want string // the text, or the error
	}{
		{file, 4, "text"},
		{file, math.MaxInt64, "text"}, // no limit: no overflow
		{big, 1 << 20, "read " + big + ": larger than 1 MiB"},
		{dir, 4, "read " + dir + ": is a directory"}, // os.ReadFile's words
		{"/dev/zero", 4, "open /dev/zero: not a regular file"},
	} {
		data, err := ReadFile(c.path, c.max)
		got := string(data)
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("ReadFile(%s, %d) = %q, want %q", c.path, c.max, got, c.want)
		}
	}
}
