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

// pluginText is c's plugin for the commands in bin, installed as in says.
func pluginText(c *client.Client, bin string, in install) string {
	text, _ := c.PluginText(filepath.ToSlash(bin), missingText(in, filepath.ToSlash(filepath.Join(bin, "gate"))))
	return text
}

// writePlugin writes c's plugin, unless the file is there: a file that is
// stopgate's current plugin is left alone, and one that differs (an older
// stopgate's, or edited by hand) is never overwritten.
func writePlugin(env *cli.Env, c *client.Client, root, bin string, in install) error {
	opencodeFile := c.HookFile
	path := filepath.Join(root, filepath.FromSlash(opencodeFile))
	want := pluginText(c, bin, in)
	data, err := os.ReadFile(path)
	switch {
	case err == nil && string(data) == want:
		fmt.Fprintf(env.Stdout, "%s: the stopgate plugin is already there\n", opencodeFile)
		return nil
	case err == nil:
		return cli.WithHint(fmt.Errorf("%s: exists and differs from the plugin this gate writes", opencodeFile),
			"the file is left as it was: remove it (or compare it with a fresh one) and run gate init --client "+c.Name+" again")
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := settings.WriteFile(path, []byte(want)); err != nil {
		return fmt.Errorf("writing %s: %w", opencodeFile, err)
	}
	fmt.Fprintf(env.Stdout, "%s: wrote the stopgate plugin (detect on tool.execute.before/after, gate on session.idle)\n", opencodeFile)
	return nil
}

// pluginFindings checks that c's plugin is there and current.
func pluginFindings(ws workspace, c *client.Client) []finding {
	opencodeFile := c.HookFile
	data, err := os.ReadFile(filepath.Join(ws.root, filepath.FromSlash(opencodeFile)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []finding{{loc: opencodeFile, msg: "does not exist: stopgate is not registered for " + c.Title, hint: `"gate init --client ` + c.Name + `" writes the plugin`}}
	case err != nil:
		return []finding{{loc: opencodeFile, msg: err.Error()}}
	case string(data) != pluginText(c, "bin", binInstall(ws.root, "bin")) && !strings.Contains(string(data), "export const Stopgate"):
		return []finding{{loc: opencodeFile, warning: true, msg: "is not stopgate's plugin", hint: "remove it and run gate init --client " + c.Name}}
	}
	return nil
}
