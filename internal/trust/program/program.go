// Package program finds the programs the hooks and the gate run: the system's from folders only
// root writes, stopgate's beside the running one; never from PATH, which a settings env may set.
package program

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SystemPath are folders only root writes (the agent's own sh would run every validator).
var SystemPath = []string{"/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin"}

// System returns the first executable name in SystemPath.
func System(name string) (string, error) {
	for _, dir := range SystemPath {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed (looked in %s): %w", name, strings.Join(SystemPath, ":"), fs.ErrNotExist)
}

// Shell is the system's sh, else /bin/sh (whose start reports the error).
func Shell() string {
	if p, err := System("sh"); err == nil {
		return p
	}
	return "/bin/sh"
}

// Self returns the running program: os.Executable, or the link it was run through under another name.
func Self() (string, error) {
	exe, err := os.Executable()
	arg0 := os.Args[0]
	switch {
	case err == nil && filepath.Base(exe) == filepath.Base(arg0):
		return exe, nil
	case strings.Contains(arg0, string(filepath.Separator)):
		return filepath.Abs(arg0)
	}
	return exec.LookPath(arg0)
}

// Stopgate returns stopgate's program name beside the running one, where installs put it.
func Stopgate(name string) (string, error) {
	self, err := Self()
	if err != nil {
		return "", fmt.Errorf("cannot find the running program: %w", err)
	}
	p := filepath.Join(filepath.Dir(self), name)
	st, err := os.Stat(p)
	switch {
	case err == nil && st.Mode().IsRegular():
		return p, nil
	case err == nil:
		err = errors.New("not a regular file")
	}
	return "", fmt.Errorf("%s is not installed beside the gate (%s: %w)", name, p, err)
}

// PluginScript is the plugin's hook script for name under root (CLAUDE_PLUGIN_ROOT), protected whole.
func PluginScript(root, name string) string { return filepath.Join(root, "bin", name) }
