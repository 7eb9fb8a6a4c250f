package detect

import (
	"cmp"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/trust"
)

// guardTool is the tamper guard's answer (docs/guard.md): a call that would change the trusted base is
// denied; any other gets no output, never "allow" (it would skip the user's permission prompts). A panic denies.
func guardTool(env *cli.Env, in *hook.Input, ans hook.Answer, root, configFile string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			env.Stderr.Write(debug.Stack())
			err = ans.Write(hook.Deny(in.HookEventName, fmt.Sprintf(
				"stopgate's tamper guard could not judge this call: internal error (a bug in stopgate): %v. "+
					"It is denied; ask the user to run it if it is needed.", p)))
		}
	}()
	calls := slices.DeleteFunc(slices.Clone(in.GuardCalls()), func(c hook.Call) bool { return !guard.Guards(c.Tool) })
	if len(calls) == 0 {
		return nil
	}
	file := config.Path(root, configFile, env.Dir)
	cfg, loadErr := config.Load(file, root)
	if config.Missing(configFile, loadErr) {
		return nil // not a stopgate project: nothing to protect
	}
	// With mistakes in the config, the state dir and config are still protected; the error follows.
	base, err := trust.For(trust.Project{Root: root, Home: env.Getenv("HOME"), File: file, Config: cfg,
		Transcript: in.TranscriptPath, PluginRoot: env.Getenv("CLAUDE_PLUGIN_ROOT")})
	set := base.Guard()
	if in.Client != nil {
		name, home := in.Client.Name, env.Getenv("HOME")
		set.LoadsEnv(client.Of(in).Title, func(p string, text func() string) (string, []string) {
			if f := trust.DotEnvWrite(name, root, home, p, text); f != nil {
				return f.Show, f.Env
			}
			return "", nil
		})
	}
	if loadErr == nil {
		loadErr = err
	}
	for _, c := range calls {
		cwd := cmp.Or(c.Cwd, in.Cwd, root)
		if h := set.Check(c.Tool, c.Input, cwd); h != nil {
			return ans.Write(hook.Deny(in.HookEventName, h.Reason()))
		}
	}
	return loadErr
}
