package client

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/hook"
)

// TestDecodeBounded: input past hook.MaxInput is refused after reading at most
// hook.MaxInput+1 bytes, however much more stdin holds.
func TestDecodeBounded(t *testing.T) {
	src := &countingReader{r: io.MultiReader(strings.NewReader(`{"prompt":"`), zeros{})}
	_, _, err := Decode(src, io.Discard, Options{})
	if err == nil || err.Error() != "hook input is larger than 64 MiB" {
		t.Fatalf("err = %v", err)
	}
	if src.n > hook.MaxInput+1 {
		t.Errorf("read %d bytes, want at most %d", src.n, hook.MaxInput+1)
	}

	// A 10 MB prompt is well within bounds.
	big := `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"` + strings.Repeat("a", 10<<20) + `"}`
	in, _, err := Decode(strings.NewReader(big), io.Discard, Options{})
	if err != nil || len(in.Prompt) != 10<<20 {
		t.Fatalf("10 MB prompt: %v", err)
	}
}

func TestDecodeReadError(t *testing.T) {
	_, _, err := Decode(io.MultiReader(strings.NewReader("{"), errReader{}), io.Discard, Options{})
	if err == nil || !errors.Is(err, errBroken) || err.Error() != "reading hook input: broken pipe" {
		t.Fatalf("err = %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

var errBroken = errors.New("broken pipe")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }
