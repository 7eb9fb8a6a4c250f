package client

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/transcript"
)

// Record is a client's own record of a session, which the gate reads at
// each stop to reconcile the queue (files the agent can reach): where the
// client keeps it, and what it shows since an offset. Every client has
// one; the gate never asks which client it is.
type Record struct {
	c  *Client
	sh Shell
}

// Shell returns the files a shell command run in cwd reads: the analysis
// detect asks (guard.ShellReads), which the caller hands the record, as
// the guard's package depends on this one.
type Shell func(cmd, cwd string) []string

// RecordOf returns the record of the client that sent in, reading the
// shell commands in it with sh.
func RecordOf(in *hook.Input, sh Shell) Record { return Of(in).Record(sh) }

// Record returns the client's record, reading the shell commands in it
// with sh.
func (c *Client) Record(sh Shell) Record { return Record{c, sh} }

// Where returns the file in which the client records the thread of the
// stop being judged (agent "" is the main thread), and how to pick that
// thread's lines; "" when the client hands the hook none.
func (r Record) Where(in *hook.Input, agent string) (path string, thread transcript.Thread) {
	return r.c.where(in, agent)
}

// Scan returns what the record shows from offset on: the files read,
// commands or skills run and prompts typed (Result.Events), and the stop
// blocks fed back in the current turn (Result.Blocks). cwd is where a
// relative path in it is taken from.
func (r Record) Scan(path string, offset int64, thread transcript.Thread, cwd string) (*transcript.Result, error) {
	if r.c.lines == nil {
		return transcript.Scan(path, offset, thread)
	}
	return scanLines(r.c.lines, r.sh, path, offset, thread, cwd)
}

// ownFiles is Where for a client that records a subagent in a file of its
// own (agent_transcript_path), when the input names it.
func ownFiles(in *hook.Input, agent string) (string, transcript.Thread) {
	if agent != "" && in.AgentTranscriptPath != "" {
		return in.AgentTranscriptPath, transcript.Thread{Agent: agent, Own: true}
	}
	return in.TranscriptPath, transcript.Thread{Agent: agent}
}

// lines decodes one line of a client's record kept as JSON lines: a value
// of L, nil when a look at its bytes shows it holds none of keys (tool
// results carry whole files, and most lines are not read; no keys: every
// line is read), or keep says the decoded line is none of the record's.
func lines[L any, P interface {
	*L
	line
}](keep func(P) bool, keys ...string) func([]byte) line {
	return func(b []byte) line {
		if len(keys) > 0 && !containsAny(b, keys...) {
			return nil
		}
		l := P(new(L))
		if json.Unmarshal(b, l) != nil || keep != nil && !keep(l) {
			return nil
		}
		return l
	}
}

// line is one decoded line of a client's record: a method per question
// the gate asks of it.
type line interface {
	// agent is the thread the line belongs to: "" the main thread.
	agent() string
	// when is when the client wrote the line; zero when it does not say.
	when() time.Time
	// reads returns the files the line shows read, relative ones from cwd,
	// those of a shell command as sh says.
	reads(cwd string, sh Shell) []string
	// command returns the slash command or skill the line shows run.
	command() string
	// typed returns what a person typed, when the line is that: a turn
	// starts there.
	typed() (string, bool)
	// block returns the reason of a stop block the client fed back, and
	// its event ("" the thread's own stop).
	block() (reason, event string, ok bool)
}

// scanLines is Record.Scan for a record of JSON lines, decoded by decode.
func scanLines(decode func([]byte) line, sh Shell, path string, offset int64, thread transcript.Thread, cwd string) (*transcript.Result, error) {
	own := hook.Stop
	if thread.Agent != "" {
		own = hook.SubagentStop
	}
	return transcript.ScanWith(path, offset, func(b []byte, start, end int64, res *transcript.Result) {
		l := decode(b)
		if l == nil || !thread.Has(l.agent(), false) {
			return
		}
		ev := transcript.Event{Offset: start, End: end, Time: l.when()}
		for _, p := range l.reads(cwd, sh) {
			e := ev
			e.Kind, e.Path = transcript.Read, p
			res.Events = append(res.Events, e)
		}
		if c := strings.TrimPrefix(l.command(), "/"); c != "" {
			e := ev
			e.Kind, e.Command = transcript.Command, c
			res.Events = append(res.Events, e)
		}
		if text, ok := l.typed(); ok {
			res.Blocks = nil // a new turn: the blocks before it were not in a row with the next
			first, _, _ := strings.Cut(strings.TrimLeft(text, " \t\r\n"), "\n")
			if strings.HasPrefix(first, "/") {
				e := ev
				e.Kind, e.Text = transcript.Prompt, first
				res.Events = append(res.Events, e)
			}
		}
		if reason, event, ok := l.block(); ok {
			if event == "" {
				event = own
			}
			res.Blocks = append(res.Blocks, transcript.Block{Event: event, Reason: cli.Clip(reason, transcript.MaxReason, "")})
		}
	})
}

// containsAny reports whether b holds one of keys.
func containsAny(b []byte, keys ...string) bool {
	s := string(b) // no copy: the compiler sees it only compared
	for _, k := range keys {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
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

// shellText returns a shell tool's command: a string, or an argv whose last
// word is the script of `bash -lc SCRIPT`.
func shellText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		if len(v) >= 3 {
			if s, ok := v[len(v)-1].(string); ok {
				if flag, _ := v[len(v)-2].(string); strings.HasPrefix(flag, "-") && strings.Contains(flag, "c") {
					return s
				}
			}
		}
		var words []string
		for _, w := range v {
			s, _ := w.(string)
			words = append(words, cli.ShellQuote(s))
		}
		return strings.Join(words, " ")
	}
	return ""
}

// stamp is a line's RFC 3339 "timestamp", zero when it has none or a bad one.
type stamp struct {
	Timestamp string `json:"timestamp"`
}

func (s stamp) when() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s.Timestamp)
	return t
}

// mainThread is Where for a client whose record holds its main thread alone.
func mainThread(in *hook.Input, agent string) (string, transcript.Thread) {
	if agent != "" {
		return "", transcript.Thread{}
	}
	return in.TranscriptPath, transcript.Thread{}
}

// fedBack says whether a user message is a stop block the client fed back
// rather than what a person typed: the record tells them apart only by the
// gate's own prefix.
func fedBack(text string) bool { return strings.HasPrefix(text, hook.BlockPrefix) }

// typedText and fedBackBlock are typed and block for a record whose user
// messages are either, told apart by fedBack.
func typedText(t string, ok bool) (string, bool)            { return t, ok && !fedBack(t) }
func fedBackBlock(t string, ok bool) (string, string, bool) { return t, "", ok && fedBack(t) }
