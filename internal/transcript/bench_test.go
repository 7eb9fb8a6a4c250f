package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkScan reads an 8 MiB transcript of Read calls and their results
// (each result a 4 KiB file): the gate's cost at a stop after a long turn.
func BenchmarkScan(b *testing.B) {
	var sb strings.Builder
	body := strings.Repeat("x", 4096)
	for i := 0; sb.Len() < 8<<20; i++ {
		fmt.Fprintf(&sb, `{"type":"assistant","uuid":"a%d","message":{"content":[{"type":"tool_use","id":"t%d","name":"Read","input":{"file_path":"/p/src/f%d.md"}}]}}`+"\n", i, i, i)
		fmt.Fprintf(&sb, `{"type":"user","uuid":"u%d","message":{"content":[{"tool_use_id":"t%d","type":"tool_result","content":"%s"}]}}`+"\n", i, i, body)
	}
	p := filepath.Join(b.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		if _, err := Scan(p, 0, Thread{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSeal checks a mark against an 8 MiB transcript: the cost the
// mark's check adds to every stop that has one, against BenchmarkScan.
func BenchmarkSeal(b *testing.B) {
	p := filepath.Join(b.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte(strings.Repeat("x", 8<<20)), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Seal(p, 4<<20); err != nil {
			b.Fatal(err)
		}
	}
}
