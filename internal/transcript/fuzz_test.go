package transcript

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzScan: no transcript content makes Scan fail or panic; whatever it
// cannot read it skips.
func FuzzScan(f *testing.F) {
	for _, s := range []string{readLine1, typed, typedBlocks, quoted, expanded, result, sidechain, skill, "", "\n", "{", `{"type":"user","message":{"content":[1,2]}}` + "\n"} {
		f.Add(s, int64(0))
	}
	if data, err := os.ReadFile("testdata/main.jsonl"); err == nil {
		f.Add(string(data), int64(100))
	}
	f.Fuzz(func(t *testing.T, content string, offset int64) {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, th := range []Thread{{}, {Agent: "a", Own: true}} {
			res, err := Scan(p, offset, th)
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			if res.End < res.From || res.End > int64(len(content)) {
				t.Fatalf("end %d outside [%d, %d]", res.End, res.From, len(content))
			}
		}
	})
}
