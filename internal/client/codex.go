package client

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
)

// Codex is OpenAI Codex: its events and fields are Claude Code's, with
// turn_id and model added. It has no read tool: a PostToolUse of Bash
// reads what the guard's dry run of its command reads (detect asks
// guard.ShellReads, as for every client's shell tool); apply_patch writes the
// files its patch names, each judged by the guard as a Write. It honours
// Claude Code's answers as they are (decision block with a reason,
// continue:false, permissionDecision deny), so they are written unchanged.
var Codex = &Client{
	Name: codexAnswers{}.Name(), Title: "Codex",
	HookFile: ".codex/hooks.json",
	Settings: []string{".codex/config.toml"}, // [hooks], [features], hook trust
	Hooks: []Hook{
		{hook.PostToolUse, "Bash", hook.Detect, 10}, // reads are shell commands
		{hook.UserPromptSubmit, "", hook.Detect, 10},
		{hook.PreToolUse, "Bash|apply_patch", hook.Detect, 10},
		{hook.Stop, "", hook.Gate, 600},
		{hook.SubagentStop, "", hook.Gate, 600},
		{hook.UserPromptSubmit, "", hook.Testhook, 10},
		{hook.Stop, "", hook.Testhook, 600},
	},
	Timeout:  600 * time.Second,
	Unit:     1,
	WallLeft: "the wall is Codex's own sandbox for shell commands (bubblewrap): with the permission profile up, the protected set is read-only to every command and to apply_patch; a command or patch the user approves outside the sandbox, and a session started with --sandbox, --dangerously-bypass-approvals-and-sandbox or a sandbox_mode anywhere in Codex's config are the guard's alone",
	Trust:    "Codex runs a project's hooks only once you trust them: review .codex/hooks.json and trust it when Codex asks (codex exec skips untrusted hooks silently; --dangerously-bypass-hook-trust is for throwaway sandboxes only)",
	Limits: []string{
		"Codex has no read tool: detect arms the files a Bash command reads, as the guard's dry run resolves it (cat, sed -n, head, tail, nl, less, grep/rg with a file operand, < redirection; through cd, globs, variables, env, timeout, xargs, find -exec); a file read any other way (a script, python -c) does not arm",
		"Codex has no slash-command expansion event: a prompt armed by a slash command arms only when the prompt starts with it",
	},
	answers: codexAnswers{},
	decode:  decodeCodex,
	where:   ownFiles,
	lines:   lines(func(l *codexLine) bool { return l.Type == "response_item" }, `"function_call"`, `"local_shell_call"`, `"role":"user"`),
}

type codexAnswers struct{ claudeAnswers }

func (codexAnswers) Name() string { return "codex" }

// Halt: Codex ends the session on a halt but shows only "hook: Stop
// Stopped" (neither stopReason nor systemMessage reaches the user), so a
// stop's halt is first a block that relays its reason through the model,
// once; the next failing stop is the halt itself.
func (codexAnswers) Halt(reason string, relayed bool) (hook.Output, bool) {
	if relayed {
		return hook.Halt(reason), false
	}
	return hook.Block(hook.HaltRelay(reason)), true
}

func decodeCodex(data []byte, _ string) (*hook.Input, error) {
	in, err := hook.Unmarshal(data)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent = codexAnswers{}, in.HookEventName
	if in.ToolName == "apply_patch" {
		// Codex's own tool, whose input hook.Unmarshal leaves alone: only
		// the files its patch writes matter, as guard calls.
		var ti struct {
			Command string `json:"command"`
		}
		json.Unmarshal(in.ToolInput, &ti)
		in.Calls = writes(PatchFiles(ti.Command))
	}
	return in, nil
}

// writes returns a guard call of Write for each file.
func writes(files []string) []hook.Call {
	calls := []hook.Call{}
	for _, f := range files {
		calls = append(calls, hook.Call{Tool: "Write", Input: hook.ToolInput{FilePath: f}})
	}
	return calls
}

// patchHeaders are the lines of an apply_patch envelope that name a file
// it adds, changes, deletes or moves to.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// PatchFiles returns the files an apply_patch envelope (Codex's and
// Copilot's edit tool) writes, as the patch names them.
func PatchFiles(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range patchHeaders {
			if f, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(f) != "" {
				out = append(out, strings.TrimSpace(f))
			}
		}
	}
	return out
}

// Codex records a session in a rollout JSONL ($CODEX_HOME/sessions/…), a
// subagent in its own (agent_transcript_path). What the gate reads there:
//
//	{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cat p.md\",\"workdir\":…}"}}
//	{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<hook_prompt hook_run_id=\"stop:…\">REASON</hook_prompt>"}]}}
//	{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"what a person typed"}]}}
//
// A read is a shell command, judged by the analysis detect uses (Shell).
type codexLine struct {
	stamp
	Type    string `json:"type"`
	Payload struct {
		Type      string          `json:"type"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Action    json.RawMessage `json:"action"` // local_shell_call
		Role      string          `json:"role"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"payload"`
}

func (*codexLine) agent() string { return "" } // a rollout is one thread's

func (l *codexLine) reads(cwd string, sh Shell) []string {
	var a map[string]any
	switch l.Payload.Type {
	case "function_call":
		a = args(l.Payload.Arguments)
	case "local_shell_call":
		a = args(l.Payload.Action)
	default:
		return nil
	}
	cmd := shellText(a["cmd"])
	if cmd == "" {
		cmd = shellText(a["command"])
	}
	if cmd == "" {
		return nil
	}
	if d, _ := a["workdir"].(string); d != "" {
		cwd = abs(d, cwd)
	}
	return sh(cmd, cwd)
}

func (*codexLine) command() string { return "" } // a skill is read with a shell command: a read

func (l *codexLine) text() (string, bool) {
	if l.Payload.Type != "message" || l.Payload.Role != "user" {
		return "", false
	}
	var texts []string
	for _, c := range l.Payload.Content {
		if c.Type == "input_text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

func (l *codexLine) typed() (string, bool) {
	t, ok := l.text()
	// Codex's own insertions (environment, instructions, hook prompts) are
	// tagged; what a person typed is not.
	return t, ok && !strings.HasPrefix(t, "<")
}

func (l *codexLine) block() (string, string, bool) {
	t, ok := l.text()
	if !ok || !strings.HasPrefix(t, "<hook_prompt ") {
		return "", "", false
	}
	_, reason, _ := strings.Cut(t, ">")
	return reason, "", true
}
