package client

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/transcript"
)

// Record is a client's own record of a session, read at each stop (docs/reconciliation.md).
type Record struct {
	c  *Client
	sh Shell
}

// Shell returns the files a shell command run in cwd reads (guard.ShellReads).
type Shell func(cmd, cwd string) []string

// Record returns the client's record, its shell commands read with sh.
func (c *Client) Record(sh Shell) Record { return Record{c, sh} }

// Where returns the file recording the stop's thread (agent "": the main one) and how to pick its lines; "": none.
func (r Record) Where(in *hook.Input, agent string) (path string, thread transcript.Thread) {
	switch {
	case r.c.threads == noRecord || agent != "" && r.c.threads == mainOnly:
		return "", transcript.Thread{}
	case agent != "" && r.c.threads == ownFile && in.AgentTranscriptPath != "":
		return in.AgentTranscriptPath, transcript.Thread{Agent: agent, Own: true}
	}
	return in.TranscriptPath, transcript.Thread{Agent: agent}
}

// threads is where a client's record keeps a subagent's thread.
type threads int

const (
	ownFile  threads = iota // in a file of its own, agent_transcript_path
	mainOnly                // nowhere: the record is the main thread's alone
	oneFile                 // in the main thread's file, its lines marked
	noRecord                // no record is read
)

// Scan returns what the record shows from offset on; relative paths are from cwd.
func (r Record) Scan(path string, offset int64, thread transcript.Thread, cwd string) (*transcript.Result, error) {
	if r.c.lines == nil {
		return transcript.Scan(path, offset, thread)
	}
	own := map[bool]string{false: hook.Stop, true: hook.SubagentStop}[thread.Agent != ""]
	return transcript.ScanWith(path, offset, func(b []byte, start, end int64, res *transcript.Result) {
		e := r.c.lines(b, reader{r.c.input, cwd, r.sh})
		if e == nil || !thread.Has(e.agent, false) {
			return
		}
		for _, p := range e.reads {
			res.Events = append(res.Events, transcript.Event{Kind: transcript.Read, Path: p, Offset: start, End: end, Time: e.when})
		}
		if c := strings.TrimPrefix(e.command, "/"); c != "" {
			res.Events = append(res.Events, transcript.Event{Kind: transcript.Command, Command: c, Offset: start, End: end, Time: e.when})
		}
		if e.typed != nil {
			res.Typed(transcript.Event{Offset: start, End: end, Time: e.when}, *e.typed)
		}
		if e.block != nil {
			res.Blocked(cmp.Or(e.blockEvent, own), *e.block)
		}
	})
}

// entry is what one line of a client's record shows.
type entry struct {
	agent      string    // its thread: "" the main one
	when       time.Time // zero when the line does not say
	reads      []string  // files read, absolute
	command    string    // the slash command or skill run
	typed      *string   // what a person typed: a turn starts there
	block      *string   // the reason of a stop block the client fed back
	blockEvent string    // its event; "": the thread's own stop
}

// user is a user message: typed, or a block fed back, told by the gate's prefix.
func (e *entry) user(text string) {
	if strings.HasPrefix(text, hook.BlockPrefix) {
		e.block = &text
	} else {
		e.typed = &text
	}
}

// lineOf decodes a line holding one of keys (none: any) into an L, which show reads into an entry.
func lineOf[L any](show func(l *L, e *entry, r reader), keys ...string) func([]byte, reader) *entry {
	return func(b []byte, r reader) *entry {
		if len(keys) > 0 && !slices.ContainsFunc(keys, func(k string) bool { return bytes.Contains(b, []byte(k)) }) {
			return nil
		}
		var l L
		if json.Unmarshal(b, &l) != nil {
			return nil
		}
		e := &entry{}
		if s, ok := any(&l).(interface{ stamped() time.Time }); ok {
			e.when = s.stamped()
		}
		show(&l, e, r)
		return e
	}
}

// stamp is a line's RFC 3339 "timestamp".
type stamp struct {
	Timestamp string `json:"timestamp"`
}

func (s *stamp) stamped() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s.Timestamp)
	return t
}

// abs returns p from cwd, cleaned; "" stays "".
func abs(p, cwd string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// file returns the file a tool call's arguments name under the first of keys set.
func file(a map[string]any, cwd string, keys ...string) []string {
	for _, k := range keys {
		if p, _ := a[k].(string); p != "" {
			return []string{abs(p, cwd)}
		}
	}
	return nil
}

// reader reads a client's record: its input's shape names its tools; a relative path is from cwd.
type reader struct {
	in  *shape
	cwd string
	sh  Shell
}

// shell returns the files cmd reads, run in the first folder of the keys of a the folder is under, or else in cwd.
func (r reader) shell(cmd string, a map[string]any) []string {
	if d := file(a, r.cwd, "workdir", "dir_path", "directory"); d != nil {
		return r.sh(cmd, d[0])
	}
	return r.sh(cmd, r.cwd)
}

// call puts in e what a recorded call of tool name with arguments a does: a read, a shell command, a skill run.
func (r reader) call(e *entry, name string, a map[string]any) {
	switch {
	case r.in.tools[name] == "Read":
		e.reads = append(e.reads, file(a, r.cwd, r.in.file, "absolute_path")...)
	case r.in.tools[name] == "Bash":
		cmd, _ := a["command"].(string)
		e.reads = append(e.reads, r.shell(cmd, a)...)
	case name == "read_many_files":
		e.reads = append(e.reads, manyFiles(a, r.cwd)...)
	case e.command == "" && (name == "skill" || name == "activate_skill"):
		e.command = cmp.Or(payload(a).str("skill"), payload(a).str("name"))
	}
}

// args decodes a tool call's arguments: an object, or JSON text of one.
func args(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		return m
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		json.Unmarshal([]byte(s), &m)
	}
	return m
}

// part is one part of a Gemini-style message: text, a call, or a result.
type part struct {
	Text     *string         `json:"text"`
	Response json.RawMessage `json:"functionResponse"`
	Call     *struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

// userText is a user message's text; false for none, or a tool's result.
func userText(parts []part) (string, bool) {
	var texts []string
	for _, p := range parts {
		if p.Response != nil {
			return "", false
		}
		if p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}
