package hook

// The hook programs, one per folder of cmd/: gate init registers them, the
// tamper guard protects them, the sandbox rules deny writes to them. Every
// list of them is this one.
const (
	Detect   = "detect"
	Gate     = "gate"
	Testhook = "testhook"
)

// Programs are the hook programs.
var Programs = []string{Detect, Gate, Testhook}
