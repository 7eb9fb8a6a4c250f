package hook

// The hook programs, one per folder of cmd/: gate init registers them, the
// tamper guard protects them, the sandbox rules deny writes to them. Every
// list of them is this one.
const (
	Detect   = "detect"
	Gate     = "gate"
	Testhook = "testhook"
	// Exporter is no hook's program but the gate runs it (telemetry, gate
	// log --export): it is protected as they are.
	Exporter = "gate-otel"
)

// Programs are the hook programs.
var Programs = []string{Detect, Gate, Testhook}

// Handles are the events each program handles, spelled once: each takes
// its own list, gate init registers a program for nothing else. testhook
// accepts SubagentStop and ignores it: a subagent's stop is never a test
// run's answer.
var Handles = map[string][]string{
	Detect:   {PostToolUse, UserPromptExpansion, UserPromptSubmit, PreToolUse, PreSkillShellCommand},
	Gate:     {Stop, SubagentStop, ConfigChange},
	Testhook: {UserPromptSubmit, Stop, SubagentStop},
}
