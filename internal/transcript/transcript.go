// Package transcript reads Claude Code session transcripts for what armed a
// prompt: Read tool calls and slash commands; and for the reply a stop
// follows, which tells whether the file has caught up with the client.
//
// A transcript is JSONL, appended to as the session runs. The lines that
// matter (as the real client, 2.1.x, writes them):
//
//	{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"/abs/p.md"}}]},"uuid":…}
//	{"type":"user","message":{"content":"<command-message>joke</command-message>\n<command-name>/joke</command-name>\n<command-args>…</command-args>"},…}
//	{"type":"user","message":{"content":"/joke extra words"},…}   a typed prompt
//	{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Skill","input":{"skill":"joke"}}]},…}
//
// After a stop's hooks ran, the client records the stop (Result.Stops):
//
//	{"type":"attachment","attachment":{"type":"hook_blocking_error","hookEvent":"Stop","blockingError":{"blockingError":"…"}},…}
//	{"type":"system","subtype":"stop_hook_summary","hookInfos":[{"command":"…"}],"hookErrors":["…"],"preventedContinuation":false,…}
//
// A subagent's lines carry "isSidechain":true and its "agentId"; the
// client writes them to <session>/subagents/agent-<id>.jsonl, older clients
// into the session's own transcript.
//
// ScanWith reads any client's record kept as lines with the same bounds,
// each line by that client's format (package client).
//
// Scan streams from a byte offset and is bounded: it examines at most
// MaxScan bytes (the newest, when there are more), skips lines longer than
// MaxLine, decodes only lines that can hold a trigger, and tolerates lines
// that are not JSON. A last line without its newline is being written and
// is left for the next scan.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/stopgate/stopgate/internal/cli"
)

// Limits of one Scan.
var (
	MaxScan int64 = 32 << 20
	MaxLine       = 4 << 20
)

// Kinds of Event.
const (
	Read    = "read"    // a Read tool call
	Command = "command" // a slash command the client expanded, or the model ran with the Skill tool
	Prompt  = "prompt"  // a typed prompt: Text holds its first line
)

// Event is one trigger found in a transcript.
type Event struct {
	Kind    string
	Path    string // Read: tool_input.file_path
	Command string // Command: the name, without "/"
	Text    string // Prompt: its first line
	Offset  int64  // where the line starts
	End     int64  // just past the line
	UUID    string
	// Time is when the client wrote the line (its "timestamp"); zero
	// when the line has none.
	Time time.Time
}

// Thread picks the lines of one thread of a session.
type Thread struct {
	// Agent is the subagent's id; "" is the main thread, whose lines are
	// neither sidechain nor an agent's.
	Agent string
	// Own is set when the file is the agent's own transcript, whose lines
	// may omit agentId.
	Own bool
}

// Has says whether a line of the thread of agent ("" none named), on a
// sidechain or not, belongs to t.
func (t Thread) Has(agent string, sidechain bool) bool {
	switch {
	case t.Agent == "":
		return !sidechain && agent == ""
	case agent == t.Agent:
		return true
	}
	return t.Own && agent == ""
}

// Result is what one Scan saw.
type Result struct {
	Events []Event
	From   int64 // where it started reading
	End    int64 // just past the last complete line: where the next scan starts
	// Reset is set when the file was shorter than the offset asked for: it
	// was replaced, and was read from its start.
	Reset bool
	// Skipped counts the bytes after the offset asked for that were not
	// examined because of MaxScan, and Long the lines skipped for MaxLine.
	Skipped int64
	Long    int
	// Bad counts candidate lines that did not decode.
	Bad int
	// Blocks are the stop blocks the client fed back to the thread (its
	// hook_blocking_error records of Stop and SubagentStop) since the last
	// prompt a person gave it, oldest first: the blocks of the current
	// turn, which no deleted file can make the gate forget.
	Blocks []Block
	// Stops are the client's records of the thread's stops, oldest first,
	// all of them: what a reconciliation mark is checked against.
	Stops []Stop
	// Last is the text of the thread's last reply (an assistant line's
	// text blocks, TrimReply'd), and Replied says it came after the
	// thread's last stop_hook_summary or typed prompt: a stop follows a
	// reply, so a record that does not show it has not caught up with the
	// client yet. A hook_blocking_error is no bound: the client writes one
	// as soon as a hook blocks, while the stop's other hooks (the gate)
	// still run. A reply before the bound is the one a stop follows when
	// the model answered a block with nothing.
	Last    string
	Replied bool
}

// Stop is one record the client wrote of a stop, after its hooks ran.
// Claude Code writes, after the hooks of a stop: for each hook that
// blocked, a hook_blocking_error attachment; then (2.1.x) one
// stop_hook_summary system line with every hook it ran, the blocking
// errors, and preventedContinuation when a hook halted. A passing
// subagent stop leaves no record in the subagent's transcript.
type Stop struct {
	Offset int64 // where the line starts
	// Summary is set for a stop_hook_summary line, else the line is one
	// hook's hook_blocking_error of Event.
	Summary   bool
	Event     string   // the blocking error's "Stop" or "SubagentStop"
	Errors    []string // the blocking reasons, in full
	Commands  []string // Summary: the hook commands that ran
	Prevented bool     // Summary: a hook halted the session
}

// Block is one stop block the client fed back.
type Block struct {
	Event  string // "Stop" or "SubagentStop"
	Reason string // its first MaxReason bytes
}

// Scan reads the transcript at path from offset for the events of thread.
func Scan(path string, offset int64, thread Thread) (*Result, error) {
	return ScanWith(path, offset, func(b []byte, start, end int64, res *Result) {
		scanLine(b, start, end, thread, res)
	})
}

// A LineFunc adds to res what one complete line of a record, at
// [start, end) in its file, says: the format of one client's record.
type LineFunc func(b []byte, start, end int64, res *Result)

// ScanWith is Scan for any record kept as lines, each read by line: the
// same bounds (MaxScan, MaxLine) and the same care for a line still being
// written.
func ScanWith(path string, offset int64, line LineFunc) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	res := &Result{From: offset}
	if offset > size || offset < 0 {
		res.Reset, res.From = true, 0
	}
	if size-res.From > MaxScan {
		res.Skipped = size - MaxScan - res.From
		res.From = size - MaxScan
	}
	if _, err := f.Seek(res.From, io.SeekStart); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	pos := res.From
	if res.Skipped > 0 {
		// Started mid-line: resume at the next line.
		var skip []byte
		n, _, complete, err := readLine(r, &skip)
		pos += n
		if err != nil || !complete {
			res.End = res.From
			return res, nil
		}
	}
	res.End = pos
	var buf []byte
	for {
		buf = buf[:0]
		n, long, complete, err := readLine(r, &buf)
		if !complete {
			// EOF inside a line: it is still being written.
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return res, nil
		}
		start := pos
		pos += n
		res.End = pos
		if long {
			res.Long++
			continue
		}
		line(buf, start, pos, res)
	}
}

// readLine reads one line into buf, up to MaxLine bytes; longer lines are
// read through and reported long. complete is false at EOF without "\n".
func readLine(r *bufio.Reader, buf *[]byte) (n int64, long, complete bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		n += int64(len(chunk))
		if !long {
			if len(*buf)+len(chunk) > MaxLine {
				long = true
				*buf = (*buf)[:0]
			} else {
				*buf = append(*buf, chunk...)
			}
		}
		switch {
		case err == nil:
			return n, long, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return n, long, false, err
		}
	}
}

type line struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	// A stop_hook_summary's fields.
	HookInfos []struct {
		Command string `json:"command"`
	} `json:"hookInfos"`
	HookErrors []string `json:"hookErrors"`
	Prevented  bool     `json:"preventedContinuation"`
	Attachment struct {
		Type          string `json:"type"`
		HookEvent     string `json:"hookEvent"`
		BlockingError struct {
			Reason string `json:"blockingError"`
		} `json:"blockingError"`
	} `json:"attachment"`
	UUID        string `json:"uuid"`
	Timestamp   string `json:"timestamp"` // parsed apart: a bad one must not lose the line
	IsMeta      bool   `json:"isMeta"`
	IsSidechain bool   `json:"isSidechain"`
	AgentID     string `json:"agentId"`
	Message     struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type block struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Text  string          `json:"text"`
	Input json.RawMessage `json:"input"`
}

var (
	keyAssistant  = []byte(`"assistant"`)
	keyText       = []byte(`"text"`)
	keyToolUse    = []byte(`"tool_use"`)
	keyRead       = []byte(`"Read"`)
	keySkill      = []byte(`"Skill"`)
	keyCommand    = []byte(`<command-name>`)
	keyUser       = []byte(`"user"`)
	keyToolResult = []byte(`"tool_result"`)
	keyBlocking   = []byte(`"hook_blocking_error"`)
	keySummary    = []byte(`"stop_hook_summary"`)
)

// scanLine adds the events of one complete line. Only lines that can hold
// a trigger or a reply are decoded: tool results, which carry whole files,
// are not.
func scanLine(b []byte, start, end int64, thread Thread, res *Result) {
	if !candidate(b) {
		return
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		res.Bad++
		return
	}
	if !thread.Has(l.AgentID, l.IsSidechain) || stopLine(&l, start, res) || len(l.Message.Content) == 0 {
		return
	}
	ev := Event{Offset: start, End: end, UUID: l.UUID}
	ev.Time, _ = time.Parse(time.RFC3339Nano, l.Timestamp)
	switch l.Type {
	case "assistant":
		assistantLine(&l, ev, res)
	case "user":
		userLine(&l, ev, res)
	}
}

// candidate reports whether a line can hold a trigger, a reply or a stop
// record, without decoding it. A reply is a line with a text block (the
// client writes one block a line): the many without one, a Write's whole
// file among them, are not decoded for it.
func candidate(b []byte) bool {
	assistant := bytes.Contains(b, keyAssistant) && bytes.Contains(b, keyText) || bytes.Contains(b, keyToolUse) && (bytes.Contains(b, keyRead) || bytes.Contains(b, keySkill))
	user := bytes.Contains(b, keyCommand) || bytes.Contains(b, keyUser) && !bytes.Contains(b, keyToolResult)
	return assistant || user || bytes.Contains(b, keyBlocking) || bytes.Contains(b, keySummary)
}

// stopLine adds the client's record of a stop, a stop block's attachment
// or a stop_hook_summary, and reports whether l was one.
func stopLine(l *line, start int64, res *Result) bool {
	if l.Type == "attachment" && l.Attachment.Type == "hook_blocking_error" &&
		(l.Attachment.HookEvent == "Stop" || l.Attachment.HookEvent == "SubagentStop") {
		res.Blocks = append(res.Blocks, Block{Event: l.Attachment.HookEvent, Reason: cli.Clip(l.Attachment.BlockingError.Reason, MaxReason, "")})
		res.Stops = append(res.Stops, Stop{Offset: start, Event: l.Attachment.HookEvent, Errors: []string{l.Attachment.BlockingError.Reason}})
		return true
	}
	if l.Type == "system" && l.Subtype == "stop_hook_summary" {
		st := Stop{Offset: start, Summary: true, Errors: l.HookErrors, Prevented: l.Prevented}
		for _, h := range l.HookInfos {
			st.Commands = append(st.Commands, h.Command)
		}
		res.Stops = append(res.Stops, st)
		res.Replied = false
		return true
	}
	return false
}

// assistantLine adds an assistant line's Read and Skill calls, and its
// text as the thread's last reply.
func assistantLine(l *line, ev Event, res *Result) {
	var blocks []json.RawMessage
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		return
	}
	var texts []string
	for _, raw := range blocks {
		var bl block
		if json.Unmarshal(raw, &bl) != nil {
			continue
		}
		if bl.Type == "text" {
			texts = append(texts, bl.Text)
		}
		if e := toolEvent(bl, ev); e.Kind != "" {
			res.Events = append(res.Events, e)
		}
	}
	// As Claude Code gives it to a stop (last_assistant_message).
	res.Last, res.Replied = TrimReply(strings.Join(texts, "\n")), true
}

// toolEvent returns the event of a tool_use block that arms, a Read of a
// file or a Skill the model ran; one without a Kind for any other block.
func toolEvent(bl block, ev Event) Event {
	var in struct {
		FilePath string `json:"file_path"`
		Skill    string `json:"skill"`
	}
	switch {
	case bl.Type != "tool_use" || json.Unmarshal(bl.Input, &in) != nil:
	case bl.Name == "Read" && in.FilePath != "":
		ev.Kind, ev.Path = Read, in.FilePath
	case bl.Name == "Skill" && in.Skill != "":
		// The model ran a command itself: the client expands it
		// with no UserPromptExpansion and no Read.
		ev.Kind, ev.Command = Command, strings.TrimPrefix(in.Skill, "/")
	}
	return ev
}

// userLine adds what a person typed: a slash command the client expanded,
// or a typed prompt starting with "/". Either starts a new turn.
func userLine(l *line, ev Event, res *Result) {
	if l.IsMeta {
		return // the expansion of a command, or a hook's feedback: not what was typed
	}
	text, ok := userText(l.Message.Content)
	if !ok {
		return
	}
	res.Blocks = nil // a new turn: the blocks before it were not in a row with the next
	res.Replied = false
	if name, ok := commandName(text); ok {
		ev.Kind, ev.Command = Command, name
		res.Events = append(res.Events, ev)
		return
	}
	first, _, _ := strings.Cut(strings.TrimLeft(text, " \t\r\n"), "\n")
	if strings.HasPrefix(first, "/") {
		ev.Kind, ev.Text = Prompt, first
		res.Events = append(res.Events, ev)
	}
}

// TrimReply trims a reply as Claude Code does (JavaScript's trim): white
// space and U+FEFF, which Go's strings.TrimSpace keeps, but not U+0085,
// which it trims.
func TrimReply(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) && r != '\u0085' || r == '\uFEFF' })
}

// userText returns what a person typed: the content string, or its text
// blocks; false for tool results.
func userText(content json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, true
	}
	var blocks []block
	if json.Unmarshal(content, &blocks) != nil {
		return "", false
	}
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case "tool_result":
			return "", false
		case "text":
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

// commandName reads a slash command the client expanded, recorded as
// <command-message>…</command-message><command-name>/name</command-name>….
// Only text that starts so counts: a prompt that merely quotes the tags
// is not a command.
func commandName(text string) (string, bool) {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, "<command-message>") && !strings.HasPrefix(t, "<command-name>") {
		return "", false
	}
	_, rest, ok := strings.Cut(t, "<command-name>")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, "</command-name>")
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	if !ok || name == "" {
		return "", false
	}
	return name, true
}

// MaxReason is how much of a block reason Result.Blocks keeps: enough to
// tell whose block it was.
const MaxReason = 200
