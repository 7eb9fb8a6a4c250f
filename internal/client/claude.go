package client

import (
	"time"

	"github.com/stopgate/stopgate/internal/hook"
)

// Claude is Claude Code, the reference: hook.Parse decodes its inputs and its answers are written as they are (its
// dialect is nil); its record is the JSONL transcript package transcript reads.
var Claude = &Client{
	Name: "claude", Title: "Claude Code",
	HookFile: ".claude/settings.json",
	Settings: []string{".claude/settings.local.json"},
	Hooks: []Hook{
		{hook.PostToolUse, "Read|Skill|Bash", hook.Detect, 10}, // a prompt read (Read, a shell command), or a command the model ran
		{hook.UserPromptExpansion, "", hook.Detect, 10},
		{hook.UserPromptSubmit, "", hook.Detect, 10},
		{hook.PreToolUse, "Write|Edit|MultiEdit|NotebookEdit|Bash", hook.Detect, 10}, // the tamper guard
		{hook.PreSkillShellCommand, "", hook.Detect, 10},                             // the guard on a skill's inline shell command; arms the skill
		{hook.Stop, "", hook.Gate, 600},
		{hook.SubagentStop, "", hook.Gate, 600},
		{hook.ConfigChange, "", hook.Gate, 10},         // refuses a settings change that weakens stopgate
		{hook.UserPromptSubmit, "", hook.Testhook, 10}, // the test runner's words
		{hook.Stop, "", hook.Testhook, 600},            // the test runner's --auto mode
	},
	Timeout:    600 * time.Second,
	ProjectVar: "CLAUDE_PROJECT_DIR",
}
