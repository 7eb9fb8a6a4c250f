// Package transcript reads a client's record of a session as bounded lines (MaxScan, MaxLine; a last line
// without its newline waits for the next scan), and Claude Code's transcript itself (docs/reconciliation.md).
package transcript

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
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
	Time    time.Time // when the client wrote the line; zero: not said
}

// Thread picks the lines of one thread of a session.
type Thread struct {
	Agent string // the subagent's id; "": the main thread
	Own   bool   // the file is the agent's own, whose lines may omit agentId
}

// Has says whether a line of agent ("" none), on a sidechain or not, is t's.
func (t Thread) Has(agent string, sidechain bool) bool {
	if t.Agent == "" {
		return !sidechain && agent == ""
	}
	return agent == t.Agent || t.Own && agent == ""
}

// Result is what one Scan saw.
type Result struct {
	Events  []Event
	From    int64   // where it started reading
	End     int64   // just past the last complete line: where the next scan starts
	Reset   bool    // the file was shorter than the offset: replaced, read from its start
	Skipped int64   // bytes after the offset not examined (MaxScan)
	Blocks  []Block // the stop blocks fed back to the thread since a person last typed, oldest first
	Stops   []Stop  // the client's records of the thread's stops, oldest first
	Last    string  // the thread's last reply, TrimReply'd
	Replied bool    // Last came after the last stop_hook_summary or typed prompt (not a hook_blocking_error: the gate may still run then)
}

// Stop is Claude Code's record of a stop: a hook's hook_blocking_error, or the stop_hook_summary of them all.
type Stop struct {
	Offset    int64    // where the line starts
	Summary   bool     // a stop_hook_summary, else one hook's hook_blocking_error of Event
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
	return ScanWith(path, offset, func(b []byte, start, end int64, res *Result) { scanLine(b, start, end, thread, res) })
}

// ScanWith is Scan for any record kept as lines: line adds what the one at [start, end) says.
func ScanWith(path string, offset int64, line func(b []byte, start, end int64, res *Result)) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	res := &Result{From: offset}
	if offset > size || offset < 0 {
		res.Reset, res.From = true, 0
	}
	if size-res.From > MaxScan {
		res.Skipped = size - MaxScan - res.From
		res.From = size - MaxScan
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, res.From, size-res.From), 64<<10)
	res.End = res.From
	var buf []byte
	long, first := false, res.Skipped > 0 // first: started mid-line, resume at the next
	for pos := res.From; ; {
		chunk, err := r.ReadSlice('\n')
		pos += int64(len(chunk))
		if long = long || len(buf)+len(chunk) > MaxLine; !long { // a longer line is read through, skipped
			buf = append(buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, err
		case err != nil:
			return res, nil // EOF inside a line: it is still being written
		case first, long: // a line begun before From, or over MaxLine
		default:
			line(buf, res.End, pos, res)
		}
		res.End, buf, long, first = pos, buf[:0], false, false
	}
}

type line struct {
	Type      string     `json:"type"`
	Subtype   string     `json:"subtype"`
	HookInfos []struct { // a stop_hook_summary's
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
	Type  string `json:"type"`
	Name  string `json:"name"`
	Text  string `json:"text"`
	Input struct {
		FilePath string `json:"file_path"` // Read's
		Skill    string `json:"skill"`     // Skill's
	} `json:"input"`
}

// scanLine adds what one complete line shows.
func scanLine(b []byte, start, end int64, thread Thread, res *Result) {
	// Undecoded, whether a line can hold a trigger, a reply or a stop (not tool results: whole files).
	has := func(key string) bool { return bytes.Contains(b, []byte(key)) }
	if !(has(`"assistant"`) && has(`"text"`) || has(`"tool_use"`) && (has(`"Read"`) || has(`"Skill"`)) ||
		has(`<command-name>`) || has(`"user"`) && !has(`"tool_result"`) || has(`"hook_blocking_error"`) || has(`"stop_hook_summary"`)) {
		return
	}
	var l line
	if json.Unmarshal(b, &l) != nil || !thread.Has(l.AgentID, l.IsSidechain) || stopLine(&l, start, res) || len(l.Message.Content) == 0 {
		return
	}
	ev := Event{Offset: start, End: end, UUID: l.UUID}
	ev.Time, _ = time.Parse(time.RFC3339Nano, l.Timestamp)
	if l.Type == "assistant" {
		assistantLine(&l, ev, res)
	} else if l.Type == "user" {
		userLine(&l, ev, res)
	}
}

// stopLine adds a stop's record (a block's attachment, a summary) and reports whether l was one.
func stopLine(l *line, start int64, res *Result) bool {
	if l.Type == "attachment" && l.Attachment.Type == "hook_blocking_error" &&
		(l.Attachment.HookEvent == "Stop" || l.Attachment.HookEvent == "SubagentStop") {
		res.Blocked(l.Attachment.HookEvent, l.Attachment.BlockingError.Reason)
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

// assistantLine adds an assistant line's Read and Skill calls, and its text as the last reply.
func assistantLine(l *line, ev Event, res *Result) {
	var blocks []json.RawMessage
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		return
	}
	var texts []string
	for _, raw := range blocks {
		var bl block
		e := ev
		switch {
		case json.Unmarshal(raw, &bl) != nil:
		case bl.Type == "text":
			texts = append(texts, bl.Text)
		case bl.Type == "tool_use" && bl.Name == "Read" && bl.Input.FilePath != "":
			e.Kind, e.Path = Read, bl.Input.FilePath
			res.Events = append(res.Events, e)
		case bl.Type == "tool_use" && bl.Name == "Skill" && bl.Input.Skill != "":
			e.Kind, e.Command = Command, strings.TrimPrefix(bl.Input.Skill, "/")
			res.Events = append(res.Events, e)
		}
	}
	// As Claude Code gives it to a stop (last_assistant_message).
	res.Last, res.Replied = TrimReply(strings.Join(texts, "\n")), true
}

// userLine adds what a person typed: a slash command the client expanded, or a typed prompt.
func userLine(l *line, ev Event, res *Result) {
	text, ok := userText(l.Message.Content)
	if l.IsMeta || !ok {
		return // the expansion of a command, or a hook's feedback: not what was typed
	}
	name, ok := commandName(text)
	if !ok {
		res.Typed(ev, text)
		return
	}
	res.Typed(ev, "")
	ev.Kind, ev.Command = Command, name
	res.Events = append(res.Events, ev)
}

// Typed adds what a person typed at ev: a new turn, and a Prompt when it starts with "/".
func (res *Result) Typed(ev Event, text string) {
	res.Blocks, res.Replied = nil, false
	if first, _, _ := strings.Cut(strings.TrimLeft(text, " \t\r\n"), "\n"); strings.HasPrefix(first, "/") {
		ev.Kind, ev.Text = Prompt, first
		res.Events = append(res.Events, ev)
	}
}

// Blocked adds a stop block of event the client fed back, its reason clipped.
func (res *Result) Blocked(event, reason string) {
	res.Blocks = append(res.Blocks, Block{Event: event, Reason: cli.Clip(reason, MaxReason, "")})
}

// TrimReply trims as Claude Code does (JavaScript's trim: U+FEFF too, U+0085 not).
func TrimReply(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) && r != '\u0085' || r == '\uFEFF' })
}

// userText returns what a person typed: the content string, or its text blocks; not tool results.
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

// commandName reads the slash command the client expanded from text starting with its tags (not quoting them).
func commandName(text string) (string, bool) {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, "<command-message>") && !strings.HasPrefix(t, "<command-name>") {
		return "", false
	}
	_, rest, _ := strings.Cut(t, "<command-name>")
	name, _, ok := strings.Cut(rest, "</command-name>")
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	return name, ok && name != ""
}

const (
	MaxReason  = 200     // how much of a block reason Result.Blocks keeps
	sealWindow = 4 << 10 // how many bytes before an offset Seal hashes
)

// ErrPastEnd is a Seal asked for an offset past the end of the file.
var ErrPastEnd = errors.New("offset past the end of the transcript")

// Seal returns the SHA-256 of the sealWindow bytes of path before end: appends keep it, rewrites change it.
func Seal(path string, end int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if size, err := f.Seek(0, io.SeekEnd); err != nil || end < 0 || end > size {
		return "", cmp.Or(err, ErrPastEnd)
	}
	from := max(0, end-sealWindow)
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, from, end-from)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
