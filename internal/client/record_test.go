package client_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/transcript"
)

// The records in testdata/records were captured from the real clients
// (internal/e2e/clients, STOPGATE_SAVE_RECORDS), the project's folder
// written @PROJECT@ and the user's home @HOME@.
const recordDir = "../../testdata/records"

// shellReads is what the gate hands a record: the guard's analysis of a
// shell command, from the session's cwd.
func shellReads(cmd, cwd string) []string { return guard.ShellReads(cmd, cwd, cwd, os.Getenv("HOME")) }

// record writes a captured record with the project at dir and returns its path.
func record(t *testing.T, name, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordDir, name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(name))
	text := strings.ReplaceAll(string(data), "@PROJECT@", dir)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Each real record, read as the gate reads it: the prompt the agent read
// (a read tool, and a shell command where the scenario ran one), and the
// blocks the client fed back in the turn.
func TestRecordScan(t *testing.T) {
	joke := "/p/src/prompts/joke.md"
	for _, tc := range []struct {
		name   string
		rec    client.Record
		agent  string
		reads  []string
		blocks []string
	}{
		{"codex/read-then-loop.jsonl", client.Codex.Record(shellReads), "", []string{joke}, []string{hook.Stop, hook.Stop, hook.Stop}},
		{"gemini/read-then-loop.jsonl", client.Gemini.Record(shellReads), "", []string{joke, joke}, []string{hook.Stop, hook.Stop, hook.Stop}},
		{"copilot/read-then-loop.jsonl", client.Copilot.Record(shellReads), "", []string{joke, joke}, []string{hook.Stop, hook.Stop, hook.Stop}},
		// The subagent's view is in its thread, not the main one's; its
		// block is recorded in the main thread, as a subagentStop's.
		{"copilot/subagent.jsonl", client.Copilot.Record(shellReads), "", nil, []string{hook.SubagentStop}},
		{"copilot/subagent.jsonl", client.Copilot.Record(shellReads), "e156b158-ec04-42e6-a22a-9407d5db87d6", []string{joke}, nil},
	} {
		t.Run(tc.name+"/"+tc.agent, func(t *testing.T) {
			path := record(t, tc.name, "/p")
			in := &hook.Input{TranscriptPath: path, AgentTranscriptPath: path, Cwd: "/p"}
			where, thread := tc.rec.Where(in, tc.agent)
			if where != path {
				t.Fatalf("Where = %q", where)
			}
			res, err := tc.rec.Scan(where, 0, thread, "/p")
			if err != nil {
				t.Fatal(err)
			}
			var reads, blocks []string
			for _, ev := range res.Events {
				if ev.Kind == transcript.Read && strings.HasSuffix(ev.Path, ".md") {
					reads = append(reads, ev.Path)
					if ev.Time.IsZero() {
						t.Errorf("the read of %s has no time", ev.Path)
					}
				}
			}
			for _, b := range res.Blocks {
				if !strings.HasPrefix(b.Reason, hook.BlockPrefix) {
					t.Errorf("block reason %q", b.Reason)
				}
				blocks = append(blocks, b.Event)
			}
			if !slices.Equal(reads, tc.reads) || !slices.Equal(blocks, tc.blocks) {
				t.Errorf("reads %v, blocks %v; want %v, %v", reads, blocks, tc.reads, tc.blocks)
			}
			// From the end, nothing; from the first block on, only the blocks.
			if again, err := tc.rec.Scan(where, res.End, thread, "/p"); err != nil || len(again.Events)+len(again.Blocks) != 0 {
				t.Errorf("scan from the end: %+v, %v", again, err)
			}
		})
	}
}

// A person's new prompt starts a turn: the blocks before it no longer count.
func TestRecordNewTurnResetsBlocks(t *testing.T) {
	for _, tc := range []struct {
		rec   client.Record
		name  string
		typed string
	}{
		{client.Codex.Record(shellReads), "codex/read-then-loop.jsonl", `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"/joke again"}]}}`},
		{client.Gemini.Record(shellReads), "gemini/read-then-loop.jsonl", `{"id":"x","type":"user","content":[{"text":"/joke again"}]}`},
		{client.Copilot.Record(shellReads), "copilot/read-then-loop.jsonl", `{"type":"user.message","data":{"content":"/joke again"}}`},
	} {
		path := record(t, tc.name, "/p")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(tc.typed + "\n")
		f.Close()
		res, err := tc.rec.Scan(path, 0, transcript.Thread{}, "/p")
		if err != nil {
			t.Fatal(err)
		}
		last := res.Events[len(res.Events)-1]
		if len(res.Blocks) != 0 || last.Kind != transcript.Prompt || last.Text != "/joke again" {
			t.Errorf("%s: blocks %v, last event %+v", tc.name, res.Blocks, last)
		}
	}
}

// Every line of every captured record fits its client's schema
// (testdata/schema/<client>/record.schema.json), which names the fields
// the dialect reads: a client that changes them fails here and in the
// end-to-end suites, which check the live records against it.
func TestRecordSchemas(t *testing.T) {
	for _, client := range []string{client.Codex.Name, client.Gemini.Name, client.Copilot.Name} {
		c := jsonschema.NewCompiler()
		sch, err := c.Compile(filepath.Join("../../testdata/schema", client, "record.schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(recordDir, client, "*.jsonl"))
		if len(files) == 0 {
			t.Fatalf("no record of %s", client)
		}
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(fh)
			sc.Buffer(nil, 16<<20)
			for n := 1; sc.Scan(); n++ {
				v, err := jsonschema.UnmarshalJSON(strings.NewReader(sc.Text()))
				if err == nil {
					err = sch.Validate(v)
				}
				if err != nil {
					t.Errorf("%s:%d: %v", f, n, err)
				}
			}
			fh.Close()
		}
	}
}

// Qwen Code's chat record (qwen.go), as it writes one: a typed command,
// the model's read_file, shell and skill calls, a tool's result and a
// fed-back block. Read as the gate reads it.
func TestRecordQwen(t *testing.T) {
	lines := []string{
		`{"uuid":"u1","timestamp":"2026-11-28T20:17:34.000Z","type":"user","message":{"role":"user","parts":[{"text":"/joke please"}]}}`,
		`{"uuid":"a1","timestamp":"2026-11-28T20:17:35.000Z","type":"assistant","message":{"role":"model","parts":[{"text":"reading"},{"functionCall":{"name":"read_file","args":{"absolute_path":"/p/src/prompts/joke.md"}}}]}}`,
		`{"uuid":"u2","timestamp":"2026-11-28T20:17:36.000Z","type":"user","message":{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"# joke"}}}]}}`,
		`{"uuid":"a2","timestamp":"2026-11-28T20:17:37.000Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"cat docs/x.md"}}}]}}`,
		`{"uuid":"a3","timestamp":"2026-11-28T20:17:38.000Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"skill","args":{"skill":"release-notes"}}}]}}`,
		`{"uuid":"u3","timestamp":"2026-11-28T20:17:39.000Z","type":"user","message":{"role":"user","parts":[{"text":"` + hook.BlockPrefix + `: 1 check failed."}]}}`,
	}
	path := filepath.Join(t.TempDir(), "chat.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := client.Qwen.Record(shellReads)
	if where, _ := rec.Where(&hook.Input{TranscriptPath: path}, ""); where != path {
		t.Fatalf("Where = %q", where)
	}
	res, err := rec.Scan(path, 0, transcript.Thread{}, "/p")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range res.Events {
		got = append(got, ev.Kind+" "+ev.Path+ev.Command+ev.Text)
		if ev.Time.IsZero() {
			t.Errorf("%s %s has no time", ev.Kind, ev.Path)
		}
	}
	want := []string{"prompt /joke please", "read /p/src/prompts/joke.md", "read /p/docs/x.md", "command release-notes"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q\nwant %q", got, want)
	}
	if len(res.Blocks) != 1 || res.Blocks[0].Event != hook.Stop || !strings.HasPrefix(res.Blocks[0].Reason, hook.BlockPrefix) {
		t.Errorf("blocks %+v, want the one fed back at Stop", res.Blocks)
	}
}

// Where each client without a record of its own subagents looks: Qwen
// Code and Cursor keep the main thread in transcript_path and no
// subagent's; VS Code's record is not read at all.
func TestRecordWhere(t *testing.T) {
	in := &hook.Input{TranscriptPath: "/t.jsonl", AgentTranscriptPath: "/a.jsonl"}
	for _, tc := range []struct {
		c           *client.Client
		main, agent string
	}{
		{client.Qwen, "/t.jsonl", ""},
		{client.Cursor, "/t.jsonl", ""},
		{client.VSCode, "", ""},
	} {
		rec := tc.c.Record(shellReads)
		if got, _ := rec.Where(in, ""); got != tc.main {
			t.Errorf("%s main thread: %q, want %q", tc.c.Name, got, tc.main)
		}
		if got, _ := rec.Where(in, "ag1"); got != tc.agent {
			t.Errorf("%s subagent: %q, want %q", tc.c.Name, got, tc.agent)
		}
	}
}
