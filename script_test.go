package stopgate_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/detect"
	"github.com/stopgate/stopgate/internal/example"
	"github.com/stopgate/stopgate/internal/gate"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/telemetry/otlp"
	"github.com/stopgate/stopgate/internal/testhook"
	"github.com/stopgate/stopgate/internal/trust/program"
	"github.com/stopgate/stopgate/internal/validator"
)

// Commands are the stopgate binaries as testscript runs them: in-process,
// from this test binary, so a script never runs a stale build.
var Commands = map[string]func(){
	"detect":   func() { cli.Main("detect", detect.Run, detect.Usage) },
	"gate":     func() { stubSystem(); cli.Main("gate", gate.Run, gate.Usage) },
	"testhook": func() { cli.Main("testhook", testhook.Run, testhook.Usage) },
	// The gate runs gate-otel, found on PATH here, when telemetry is on.
	"gate-otel": func() { cli.Main("gate-otel", otlp.Run, otlp.Usage) },
}

// stubSystem puts the folder $STOPGATE_TEST_SYSTEM before the system's
// (program.SystemPath), for a script's stand-in bwrap: the gate never finds
// a program on PATH, and only this test binary reads the variable.
func stubSystem() {
	if dir := os.Getenv("STOPGATE_TEST_SYSTEM"); dir != "" {
		program.SystemPath = append([]string{dir}, program.SystemPath...)
	}
}

var update = flag.Bool("update", false, "rewrite the cmp golden files of failing scripts (review the diff)")

func TestMain(m *testing.M) { testscript.Main(m, Commands) }

// TestScripts runs testdata/script/*.txtar: each is one hook or CLI
// contract, stdin JSON in, stdout and exit code out.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		RequireUniqueNames:  true,
		// [mountable]: faultfs can mount here. [bwrap]: bubblewrap can
		// confine a validator here (make test installs it).
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "mountable":
				return mountable(), nil
			case "bwrap":
				_, err := validator.Bwrap()
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("CLAUDE_PROJECT_DIR", env.WorkDir)
			env.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"expand":     cmdExpand,
			"example":    cmdExample,
			"queue":      cmdQueue,
			"exits":      cmdExits,
			"gone":       cmdGone,
			"waitfile":   cmdWaitFile,
			"faultfs":    cmdFaultFS,
			"signal":     cmdSignal,
			"still":      cmdStill,
			"schema":     cmdSchema,
			"captured":   cmdCaptured,
			"recordstop": cmdRecordStop,
			"reply":      cmdReply,
			"blackhole":  cmdBlackhole,
			"registered": cmdRegistered,
			"record":     cmdRecord,
			"fakejudge":  cmdFakeJudge,
		},
	})
}

// expand FILE... replaces $VAR and ${VAR} in each file with the script's
// environment, so hook inputs can carry absolute paths under $WORK.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expand FILE...")
	}
	for _, f := range args {
		data := ts.ReadFile(f)
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(os.Expand(data, ts.Getenv)), 0o644))
	}
}

// record CLIENT/NAME DEST [LINES] writes a client's real record of a
// session, captured into testdata/records, to DEST: its project folder
// (@PROJECT@) is the script's, its home (@HOME@) $HOME; with LINES, only
// its first LINES lines (the record as it was at an earlier stop).
func cmdRecord(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: record CLIENT/NAME DEST [LINES]")
	}
	data, err := os.ReadFile(filepath.Join("testdata", "records", filepath.FromSlash(args[0])))
	ts.Check(err)
	text := strings.NewReplacer("@PROJECT@", ts.Getenv("WORK"), "@HOME@", ts.Getenv("HOME")).Replace(string(data))
	if len(args) == 3 {
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		lines := strings.SplitAfter(text, "\n")
		text = strings.Join(lines[:min(n, len(lines))], "")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(text), 0o644))
}

// example copies the repo's example project (mappings.toml, src/prompts,
// .claude/commands, validators) into the working dir.
func cmdExample(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: example")
	}
	repo, err := os.Getwd()
	ts.Check(err)
	ts.Check(example.Copy(repo, ts.MkAbs(".")))
}

// queue [STATEDIR] prints the pending entries, one line each, sorted:
// "session scope prompt trigger arms=N", and "blocks session scope N".
// Baselines are not listed: every arming records one beside its entry,
// and one whose entry was deleted stays until the next arming replaces it.
func cmdQueue(ts *testscript.TestScript, neg bool, args []string) {
	dir := "tmp/validation"
	if len(args) > 0 {
		dir = args[0]
	}
	root := filepath.Join(ts.MkAbs(dir), "sessions")
	var lines []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) != 3 {
			lines = append(lines, "stray "+rel)
			return nil
		}
		switch {
		case parts[2] == "blocks":
			var b struct{ Count int }
			readJSON(ts, path, &b)
			lines = append(lines, fmt.Sprintf("blocks %s %s %d", parts[0], parts[1], b.Count))
		case strings.HasSuffix(parts[2], ".baseline"):
		case strings.HasSuffix(parts[2], ".json"):
			var e queue.Entry
			readJSON(ts, path, &e)
			lines = append(lines, fmt.Sprintf("%s %s %s %s arms=%d", e.Session, parts[1], e.Prompt, e.Trigger, e.Arms))
		default:
			lines = append(lines, "stray "+rel)
		}
		return nil
	})
	sort.Strings(lines)
	out := strings.Join(lines, "\n")
	if len(lines) > 0 {
		out += "\n"
	}
	if neg && out != "" {
		ts.Fatalf("queue is not empty:\n%s", out)
	}
	ts.Stdout().Write([]byte(out))
}

func readJSON(ts *testscript.TestScript, path string, v any) {
	data, err := os.ReadFile(path)
	ts.Check(err)
	ts.Check(json.Unmarshal(data, v))
}
