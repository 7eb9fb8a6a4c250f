package gate

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/settings"
)

// opencodePlugin is the plugin `gate init --client opencode` writes; __BIN__ becomes
// the directory holding the commands.
//
//go:embed opencode_plugin.js
var opencodePlugin string

// opencodeFile is where OpenCode loads a project's plugins from.
var opencodeFile = client.OpenCode.HookFile

// pluginText is the plugin for the commands in bin, installed as in says,
// written into it as JSON strings, which JavaScript reads as the same.
func pluginText(bin string, in install) string {
	text := missingText(in, filepath.ToSlash(filepath.Join(bin, "gate")))
	return strings.NewReplacer(`"__BIN__"`, settings.Quote(filepath.ToSlash(bin)), `"__MISSING__"`, settings.Quote(text)).Replace(opencodePlugin)
}

// initOpenCode writes the plugin, unless the file is there: a file that is
// stopgate's current plugin is left alone, and one that differs (an older
// stopgate's, or edited by hand) is never overwritten.
func initOpenCode(env *cli.Env, root, bin string, in install) error {
	path := filepath.Join(root, filepath.FromSlash(opencodeFile))
	want := pluginText(bin, in)
	data, err := os.ReadFile(path)
	switch {
	case err == nil && string(data) == want:
		fmt.Fprintf(env.Stdout, "%s: the stopgate plugin is already there\n", opencodeFile)
		return nil
	case err == nil:
		return cli.WithHint(fmt.Errorf("%s: exists and differs from the plugin this gate writes", opencodeFile),
			"the file is left as it was: remove it (or compare it with a fresh one) and run gate init --client opencode again")
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := settings.WriteFile(path, []byte(want)); err != nil {
		return fmt.Errorf("writing %s: %w", opencodeFile, err)
	}
	fmt.Fprintf(env.Stdout, "%s: wrote the stopgate plugin (detect on tool.execute.before/after, gate on session.idle)\n", opencodeFile)
	return nil
}

// opencodeFindings checks that the plugin is there and current.
func opencodeFindings(ws workspace) []finding {
	data, err := os.ReadFile(filepath.Join(ws.root, filepath.FromSlash(opencodeFile)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []finding{{loc: opencodeFile, msg: "does not exist: stopgate is not registered for OpenCode", hint: `"gate init --client opencode" writes the plugin`}}
	case err != nil:
		return []finding{{loc: opencodeFile, msg: err.Error()}}
	case string(data) != pluginText("bin", binInstall(ws.root, "bin")) && !strings.Contains(string(data), "export const Stopgate"):
		return []finding{{loc: opencodeFile, warning: true, msg: "is not stopgate's plugin", hint: "remove it and run gate init --client opencode"}}
	}
	return nil
}
