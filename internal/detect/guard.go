package detect

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/trust"
)

// guardTool is the tamper guard's answer (docs/guard.md): a call that would
// change the trusted base is denied with a reason; any other gets no output,
// never "allow", which would skip the user's permission prompts. Without
// mappings.toml nothing is protected; with mistakes in it the state dir and
// the config are, and the error follows. A panic denies: a guard that cannot
// judge a call does not let it by.
func guardTool(env *cli.Env, in *hook.Input, ans hook.Answer, root, configFile string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			env.Stderr.Write(debug.Stack())
			err = ans.Write(hook.Deny(in.HookEventName, fmt.Sprintf(
				"stopgate's tamper guard could not judge this call: internal error (a bug in stopgate): %v. "+
					"It is denied; ask the user to run it if it is needed.", p)))
		}
	}()
	calls := guardedCalls(in)
	if len(calls) == 0 {
		return nil
	}
	file := config.Path(root, configFile, env.Dir)
	cfg, loadErr := config.Load(file, root)
	if configFile == "" && errors.Is(loadErr, fs.ErrNotExist) {
		return nil // not a stopgate project: nothing to protect
	}
	// With mistakes in the config, the state dir and the config file are
	// still protected; the error is reported after the judgement.
	base, err := trust.For(trust.Project{Root: root, Home: env.Getenv("HOME"), File: file, Config: cfg,
		Transcript: in.TranscriptPath, PluginRoot: env.Getenv("CLAUDE_PLUGIN_ROOT")})
	set := base.Guard()
	if loadErr == nil {
		loadErr = err
	}
	for _, c := range calls {
		cwd := cmp.Or(c.Cwd, in.Cwd, root)
		if h := set.Check(c.Tool, c.Input, cwd); h != nil {
			return ans.Write(hook.Deny(in.HookEventName, h.Reason()))
		}
		if why := dotEnvDenial(in, c, cwd, root, env.Getenv("HOME")); why != "" {
			return ans.Write(hook.Deny(in.HookEventName, why))
		}
	}
	return loadErr
}

// dotEnvDenial is the reason to refuse a Write or Edit call c that would
// make a .env the client loads set a variable of the hooks' environment
// (trust.DotEnvWrite): the text after the call is judged, an Edit's as
// the file with every old_string replaced. "" lets it by: another
// client, tool or file, or only the app's variables.
func dotEnvDenial(in *hook.Input, c hook.Call, cwd, root, home string) string {
	if in.Client == nil || c.Tool != "Write" && c.Tool != "Edit" || c.Input.FilePath == "" {
		return ""
	}
	p := c.Input.FilePath
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	after := func() string { // read only for a loaded .env, not on every Edit
		if c.Tool != "Edit" {
			return c.Input.Content
		}
		if c.Input.OldString == "" {
			return c.Input.NewString
		}
		old, _ := os.ReadFile(p) // absent: the edit creates it from new_string
		return strings.ReplaceAll(string(old), c.Input.OldString, c.Input.NewString)
	}
	f := trust.DotEnvWrite(in.Client.Name(), root, home, p, after)
	if f == nil {
		return ""
	}
	env := strings.Join(f.Env, ", ")
	return fmt.Sprintf("stopgate denied this %s call: it would make %s set %s, which %s loads into its environment and hands every hook "+
		"and validator: it would choose the programs they run. Keep the app's own variables there; if %s is really needed, ask the user "+
		"to set it in the shell that starts the client.", c.Tool, f.Show, env, client.Of(in).Title, env)
}

// guardedCalls returns the input's tool calls the guard judges: the call
// itself, or the writes a client's tool makes (package client).
func guardedCalls(in *hook.Input) []hook.Call {
	return slices.DeleteFunc(slices.Clone(in.GuardCalls()), func(c hook.Call) bool { return !guard.Guards(c.Tool) })
}
