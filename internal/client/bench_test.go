package client

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/hook"
)

// claudeRead is a Claude Code PostToolUse of Read carrying size bytes of file.
func claudeRead(size int) []byte {
	content, _ := json.Marshal(strings.Repeat("x", size))
	return []byte(`{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.md"},"tool_response":{"type":"text","file":{"filePath":"/p/a.md","content":` + string(content) + `}},"tool_use_id":"toolu_1"}`)
}

// BenchmarkParse is what the dialect layer costs a hook: recognising the client, then
// decoding, against hook.Parse alone (the reference's decoding before the layer).
func BenchmarkParse(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		data := claudeRead(size)
		b.Run("layer=dialect/input="+label(size), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse(data, Options{}, hook.PostToolUse); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("layer=hook/input="+label(size), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := hook.Parse(data, hook.PostToolUse); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	cmd := []byte(codexPostBash)
	b.Run("layer=dialect/input=codex-shell-read", func(b *testing.B) {
		for b.Loop() {
			if _, err := Parse(cmd, Options{Client: Codex.Name}, hook.PostToolUse); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func label(n int) string {
	if n >= 1<<20 {
		return "1MiB"
	}
	return "4KiB"
}

// BenchmarkRecognise is recognition alone, on a 1 MiB Claude Code input.
func BenchmarkRecognise(b *testing.B) {
	data := claudeRead(1 << 20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Recognise(data, nil)
	}
}
