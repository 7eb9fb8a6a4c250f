package gate

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/regular"
)

// pluginName is the name of stopgate's Claude Code plugin, in every
// marketplace (.claude-plugin/marketplace.json).
const pluginName = "stopgate"

// installedPlugin returns the folder of stopgate's plugin as Claude Code
// installed it from a marketplace, when the settings files (read, in the
// order the client reads them: a later one's key wins) enable it with
// enabledPlugins "stopgate@MARKETPLACE": true. Its hooks/hooks.json then
// registers stopgate's hooks for the project: gate init writes only the OS
// wall, and gate check checks the plugin's hooks. "" when none is.
func installedPlugin(home string, read []string) string {
	enabled := map[string]bool{}
	for _, path := range read {
		var s struct {
			EnabledPlugins map[string]bool `json:"enabledPlugins"`
		}
		if data, err := regular.ReadFile(path, maxSettings); err == nil && json.Unmarshal(data, &s) == nil {
			for key, on := range s.EnabledPlugins {
				if name, _, ok := strings.Cut(key, "@"); ok && name == pluginName {
					enabled[key] = on
				}
			}
		}
	}
	if home == "" || len(enabled) == 0 {
		return ""
	}
	var installed struct {
		Plugins map[string][]struct {
			InstallPath string `json:"installPath"`
		} `json:"plugins"`
	}
	data, err := regular.ReadFile(filepath.Join(home, ".claude", "plugins", "installed_plugins.json"), maxSettings)
	if err != nil || json.Unmarshal(data, &installed) != nil {
		return ""
	}
	for _, key := range slices.Sorted(maps.Keys(enabled)) {
		on := enabled[key]
		for _, in := range installed.Plugins[key] {
			if _, err := os.Stat(filepath.Join(in.InstallPath, pluginHooks)); on && err == nil {
				return in.InstallPath
			}
		}
	}
	return ""
}

// pluginRegisters is the folder of stopgate's installed plugin
// (installedPlugin) when it registers the project's hooks: the project's
// own settings register none of stopgate's.
func pluginRegisters(env *cli.Env, root string) string {
	home := env.Getenv("HOME")
	if claudeRegistered(guard.Registrations(root, home, nil)) {
		return ""
	}
	return installedPlugin(home, settingsFiles(env, root).paths())
}

// initWallOnly is gate init where stopgate's plugin registers the hooks
// (plugin, its folder; "" for --wall-only): registering them in the
// project's settings too would run each twice. It writes what a plugin
// cannot: the OS wall, and as on every route the starter and the state
// dir's .gitignore line.
func initWallOnly(env *cli.Env, root, plugin string) error {
	if plugin != "" {
		fmt.Fprintf(env.Stdout, "%s: no hooks: stopgate's plugin registers them (%s)\n", settingsFile, plugin)
	}
	if err := writeStarter(env, root); err != nil {
		return err
	}
	if err := chooseWall(root, true); err != nil {
		return err
	}
	if err := writeWall(env, root, nil); err != nil {
		return err
	}
	return writeIgnore(env, root)
}
