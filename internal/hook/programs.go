package hook

// The hook programs, one per folder of cmd/: every list of them is this one.
const (
	Detect   = "detect"
	Gate     = "gate"
	Testhook = "testhook"
	// Exporter is no hook's, but the gate runs it: protected as they are.
	Exporter = "gate-otel"
)

// Programs are the hook programs.
var Programs = []string{Detect, Gate, Testhook}

// Handles are the events each program handles and is registered for
// (testhook ignores SubagentStop: never a test run's answer).
var Handles = map[string][]string{
	Detect:   {PostToolUse, UserPromptExpansion, UserPromptSubmit, PreToolUse, PreSkillShellCommand},
	Gate:     {Stop, SubagentStop, ConfigChange},
	Testhook: {UserPromptSubmit, Stop, SubagentStop},
}
