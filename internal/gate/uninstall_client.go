package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/settings"
)

// undo is what gate uninstall --client does to one of the client's files.
type undo struct {
	base string // the folder name is in, above which nothing is removed
	name string // slash-separated, from base
	had  bool   // the file is there
	out  []byte // its new text, when r.Removed is not empty
	gone bool   // remove the file instead: nothing but stopgate's is left
	r    settings.Removal
}

// clientUndo plans `gate uninstall --client NAME`: taking out of the
// client's own files what gate init --client wrote there, each only where
// it is still exactly as init wrote it (the same contract as for
// .claude/settings.json).
func clientUndo(env *cli.Env, c *client.Client, root, bin string) ([]undo, error) {
	var u undo
	var err error
	if c.IsPlugin() {
		u, err = undoPlugin(c, root, bin)
	} else {
		u, err = undoHooks(c, root, c.HookFile, owned(c, root, bin), nil)
	}
	if err != nil || c.Wall == nil {
		return []undo{u}, err
	}
	w, err := undoClientWall(env, c, root)
	return []undo{u, w}, err
}

// undoFile plans what to do with the project file name: plan fills u in
// from the file's text; nothing is planned when the file is not there. An
// error of plan's is named with the file (uninstallError).
func undoFile(root, name string, plan func(u *undo, data []byte) error) (undo, error) {
	u := undo{base: root, name: name}
	data, err := settings.ReadIfThere(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil || data == nil {
		return u, err
	}
	u.had = true
	if err := plan(&u, data); err != nil {
		return u, uninstallError(name, err)
	}
	return u, nil
}

// undoHooks takes the hook entries of want out of c's hook file name, in
// c's shape (Claude Code's, with the deny rules of deny).
func undoHooks(c *client.Client, root, name string, want []settings.Hook, deny []string) (undo, error) {
	return undoFile(root, name, func(u *undo, data []byte) (err error) {
		u.out, u.r, u.gone, err = c.Remove(data, want, deny)
		return err
	})
}

// undoPlugin removes c's plugin file while it is byte for byte the one
// gate init writes.
func undoPlugin(c *client.Client, root, bin string) (undo, error) {
	return undoFile(root, c.HookFile, func(u *undo, data []byte) error {
		if string(data) == pluginText(c, bin, binInstall(root, bin)) {
			u.gone = true
			u.r.Removed = []string{"the stopgate plugin"}
		} else {
			u.r.Left = []string{"the plugin: it differs from the one gate init writes"}
		}
		return nil
	})
}

// apply writes the new text, or removes the file and the folders that
// removal leaves empty.
func (u undo) apply() error {
	if len(u.r.Removed) == 0 {
		return nil
	}
	root := u.base
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
