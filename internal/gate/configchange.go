package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/stop"
)

// Events are the hook events the gate program handles: the stops (package
// stop) and Claude Code's ConfigChange.
var Events = append(append([]string{}, stop.Events...), hook.ConfigChange)

// configChangeInput returns the input when data is a ConfigChange, read
// from stdin before the stop hook would read it.
func configChangeInput(data []byte) (*hook.Input, bool) {
	if !bytes.Contains(data, []byte(`"ConfigChange"`)) {
		return nil, false
	}
	in, err := hook.Parse(data, hook.ConfigChange)
	return in, err == nil
}

// configChange is the gate's ConfigChange answer: Claude Code asks before a
// running session takes a changed settings file, and a block keeps the
// session on the settings it had. A change is refused when, as the files
// stand after it, stopgate is weaker than gate init left it: a stopgate
// hook no longer registered, disableAllHooks, a sandbox key of the wall
// set against it or unset, a deny rule of the protected set dropped, a
// command excluded from the sandbox. Skills and managed policy (which no
// hook can refuse) pass, as does any change in a project without
// mappings.toml.
func configChange(env *cli.Env, in *hook.Input) error {
	if in.Source == "skills" || in.Source == "policy_settings" {
		return nil
	}
	root := project.Root(env.Getenv, in.Cwd, env.Dir)
	ws := workspace{root: root, file: config.Path(root, "", env.Dir)}
	cfg, _, err := config.Inspect(ws.file, ws.root, config.FileOnly)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // not a stopgate project
	}
	var why []string
	for _, f := range hookFindings(env, ws, cfg, "") {
		if !f.warning {
			why = append(why, f.loc+": "+f.msg)
		}
	}
	srcs := settingsFiles(env, root)
	for _, src := range srcs {
		if disablesHooks(src.path) {
			why = append(why, src.name+": disableAllHooks is true")
		}
	}
	if rules, nothing := wallRules(root, env.Getenv("HOME"), ws.file, cfg, nil); !nothing {
		w, bad := readWalls(srcs)
		if bad != nil {
			why = append(why, bad.loc+": "+bad.msg)
		} else {
			for _, fs := range [][]finding{w.against(), w.unset(), w.lacking(rules), w.excludedCommands()} {
				for _, f := range fs {
					why = append(why, f.loc+": "+f.msg)
				}
			}
		}
	}
	if len(why) == 0 {
		return nil
	}
	changed := in.ChangedFile
	if changed == "" {
		changed = in.Source
	}
	return hook.Write(env.Stdout, hook.Block("stopgate refused this change to "+changed+
		": it removes or weakens stopgate's hooks or its wall, so this session keeps the settings it had. "+
		strings.Join(why, "; ")+". If the change is wanted, the user makes it and starts a new session (gate check says what is missing)."))
}

// disablesHooks reports whether the settings file at path sets
// disableAllHooks.
func disablesHooks(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var s struct {
		DisableAllHooks bool `json:"disableAllHooks"`
	}
	return json.Unmarshal(data, &s) == nil && s.DisableAllHooks
}

// hookStdin reads the hook input once, so that a ConfigChange can be told
// from a stop, and hands it back as the stop hook's stdin.
func hookStdin(env *cli.Env) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(env.Stdin, hook.MaxInput+1))
	if err != nil {
		return nil, err
	}
	env.Stdin = bytes.NewReader(data)
	return data, nil
}
