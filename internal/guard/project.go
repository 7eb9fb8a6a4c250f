package guard

import (
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
)

// ProjectSet is the protected set of the project at root: the one
// computation behind detect's guard, the client sandbox's deny rules,
// gate check's account of them and the confinement of run validators, so
// that they cannot disagree. file is the config file in use; cfg is nil
// when it cannot be loaded: the file and the state dir it names, as far as
// it can be read (config.ReadStateDir), are still protected. bins are further folders that may hold the hook programs
// (gate init --bin); transcript is the session's, "" outside a hook. The
// clients' hook files say which other clients' files to protect, and
// where the hook programs they run are (Registrations); registered are
// programs about to be registered (gate init writes them in one pass).
//
// An error means the run validators could not be read from cfg; the set
// returned beside it protects everything else.
func ProjectSet(root, home, file, transcript string, bins []string, cfg *config.Config, registered ...string) (*Set, error) {
	return ProjectSetFrom(Registrations(root, home, nil), root, home, file, transcript, bins, cfg, registered...)
}

// ProjectSetFrom is ProjectSet with the hook files' registrations as the
// caller read them (Registrations), each file once per event.
func ProjectSetFrom(regs []Registered, root, home, file, transcript string, bins []string, cfg *config.Config, registered ...string) (*Set, error) {
	src := Source{
		Root: root, Home: home, File: file,
		Commands:   hookPrograms(root, bins),
		Clients:    registeredClients(root),
		Transcript: transcript,
	}
	for _, r := range regs {
		if r.Path != "" {
			src.Registered = append(src.Registered, r.Path)
		}
	}
	src.Registered = append(src.Registered, registered...)
	var err error
	if cfg == nil {
		src.StateDir, _ = config.ReadStateDir(file, root)
	} else {
		src.StateDir, src.Protect = cfg.StateDir(), cfg.Settings.Protect
		if src.Protect == nil || len(src.Protect) > 0 {
			src.Runs, err = runsOf(cfg)
		}
	}
	return Defaults(src), err
}

// runsOf returns cfg's run validators.
func runsOf(cfg *config.Config) ([]Run, error) {
	vs, err := cfg.Runs()
	if err != nil {
		return nil, err
	}
	runs := make([]Run, len(vs))
	for i, v := range vs {
		runs[i] = Run{Name: v.Name, Command: v.Run}
	}
	return runs, nil
}

// hookPrograms returns the paths the hook programs may have: in the
// project's bin/, in bins, and beside the running program. Only those
// inside the project are protected (Defaults).
func hookPrograms(root string, bins []string) []string {
	dirs := append([]string{filepath.Join(root, "bin")}, bins...)
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	var out []string
	for _, d := range dirs {
		for _, name := range hook.Programs {
			out = append(out, filepath.Join(d, name))
		}
	}
	return out
}
