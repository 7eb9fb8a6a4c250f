package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// undo is what gate uninstall --client does to one of the client's files.
type undo struct {
	name string // slash-separated, from the project root
	had  bool   // the file is there
	out  []byte // its new text, when r.Removed is not empty
	gone bool   // remove the file instead: nothing but stopgate's is left
	r    settings.Removal
}

// clientUndo plans `gate uninstall --client NAME`: taking out of the
// client's own files what gate init --client wrote there, each only where
// it is still exactly as init wrote it (the same contract as for
// .claude/settings.json).
func clientUndo(env *cli.Env, c *agentClient, root, bin string) ([]undo, error) {
	var u undo
	var err error
	if c.plugin {
		u, err = undoOpenCode(root, bin)
	} else {
		u, err = undoHooks(root, c.file, c.native, c.owned(root, bin), nil)
	}
	if err != nil || c.wallOff == nil {
		return []undo{u}, err
	}
	w, err := c.wallOff(env, root)
	return []undo{u, w}, err
}

// readProject returns the text of the project file name; nil when it is not there.
func readProject(root, name string) ([]byte, error) {
	return readIfThere(filepath.Join(root, filepath.FromSlash(name)))
}

// undoHooks takes the hook entries of want out of the hook file name, in
// Claude Code's shape (with the deny rules of deny) or, native, in Copilot
// CLI's own.
func undoHooks(root, name string, native bool, want []settings.Hook, deny []string) (undo, error) {
	u := undo{name: name}
	data, err := readProject(root, name)
	if err != nil || data == nil {
		return u, err
	}
	u.had = true
	if native {
		u.out, u.r, u.gone, err = removeCopilot(data, want, hook.Programs)
	} else {
		u.out, u.r, err = settings.Remove(data, want, hook.Programs, deny)
	}
	if err != nil {
		return u, uninstallError(name, err)
	}
	return u, nil
}

// undoOpenCode removes the plugin file while it is byte for byte the one
// gate init writes.
func undoOpenCode(root, bin string) (undo, error) {
	u := undo{name: opencodeFile}
	data, err := readProject(root, opencodeFile)
	if err != nil || data == nil {
		return u, err
	}
	u.had = true
	if string(data) == pluginText(bin, binInstall(root, bin)) {
		u.gone = true
		u.r.Removed = []string{"the stopgate plugin"}
	} else {
		u.r.Left = []string{"the plugin: it differs from the one gate init writes"}
	}
	return u, nil
}

// undoCodexWall takes Codex's wall out of its project config.
func undoCodexWall(_ *cli.Env, root string) (undo, error) {
	u := undo{name: codexConfig}
	data, err := readProject(root, codexConfig)
	if err != nil || data == nil {
		return u, err
	}
	u.had = true
	u.out, u.r.Removed, u.r.Left, err = removeCodexWall(data)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			err = settings.ErrorAt(data, pe.Position.Start, "%s", pe.Message)
		}
		return u, uninstallError(codexConfig, err)
	}
	u.gone = len(bytes.TrimSpace(u.out)) == 0
	return u, nil
}

// apply writes the new text, or removes the file and the folders that
// removal leaves empty.
func (u undo) apply(root string) error {
	if len(u.r.Removed) == 0 {
		return nil
	}
	path := filepath.Join(root, filepath.FromSlash(u.name))
	if !u.gone {
		if err := settings.WriteFile(path, u.out); err != nil {
			return fmt.Errorf("writing %s: %w", u.name, err)
		}
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", u.name, err)
	}
	for dir := filepath.Dir(path); dir != root && len(dir) > len(root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty: someone's
			break
		}
	}
	return nil
}
