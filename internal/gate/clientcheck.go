package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/settings"
)

// clientFindings checks one client's registration: its file, each hook
// registered or missing, each registered program present, the gate's
// timeout above every validator's, and max_blocks below the client's cap.
func clientFindings(env *cli.Env, ws workspace, cfg *config.Config, c *agentClient) []finding {
	if c.plugin {
		return opencodeFindings(ws)
	}
	bin := "bin"
	want := c.wanted(ws.root, bin)
	path := filepath.Join(ws.root, filepath.FromSlash(c.file))
	hint := fmt.Sprintf(`"gate init --client %s" registers every stopgate hook and keeps the rest of the file`, c.name)
	var out []finding
	if f, bad := capFinding(ws, cfg, c); bad {
		out = append(out, f)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return append(out, finding{loc: c.file, msg: "does not exist: no stopgate hook is registered for " + c.title,
			hint: fmt.Sprintf(`"gate init --client %s" registers them`, c.name)})
	}
	if err != nil {
		return append(out, finding{loc: c.file, msg: err.Error()})
	}
	var found []settings.Found
	if c.native {
		var f *copilotFile
		if f, err = parseCopilot(data); err == nil {
			found = lookupCopilot(f, want)
		}
	} else {
		found, err = settings.Lookup(data, want)
	}
	if err != nil {
		f := finding{loc: c.file, msg: err.Error(), hint: c.title + " cannot read this file either: fix it by hand"}
		var se *settings.Error
		if errors.As(err, &se) {
			f.loc, f.msg = fmt.Sprintf("%s:%d:%d", c.file, se.Line, se.Column), se.Msg
		}
		return append(out, f)
	}
	for _, fd := range found {
		if !fd.Registered {
			out = append(out, finding{loc: c.file, msg: fd.Hook.String() + " is not registered", hint: hint})
			continue
		}
		if f, bad := clientProgramFinding(ws, c, fd); bad {
			out = append(out, f)
		}
		inSeconds := fd
		inSeconds.Timeout /= c.unit
		if f, bad := timeoutFinding(cfg, inSeconds, c.file); bad {
			out = append(out, f)
		}
	}
	return dedupe(out)
}

// capFinding warns when max_blocks would not end a failing loop before the
// client's own cap lets the agent stop unchecked.
func capFinding(ws workspace, cfg *config.Config, c *agentClient) (finding, bool) {
	if cfg == nil || c.blockCap == 0 || cfg.Settings.MaxBlocks < c.blockCap {
		return finding{}, false
	}
	return finding{loc: ws.rel(ws.file), warning: true,
		msg: fmt.Sprintf("settings.max_blocks is %d, but %s lets the agent stop after %d consecutive blocks: the loop would end there, unchecked, instead of halting",
			cfg.Settings.MaxBlocks, c.title, c.blockCap),
		hint: fmt.Sprintf("set max_blocks below %d", c.blockCap)}, true
}

// clientProgramFinding warns when a registered hook's program is not where
// its command says, the client's project variable read as the root.
func clientProgramFinding(ws workspace, c *agentClient, fd settings.Found) (finding, bool) {
	path := os.Expand(settings.FirstWord(fd.Command), func(v string) string {
		switch v {
		case "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "COPILOT_PROJECT_DIR":
			return ws.root
		}
		return os.Getenv(v)
	})
	if !filepath.IsAbs(path) {
		return finding{}, false
	}
	if st, err := os.Stat(path); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return finding{}, false
	}
	shownPath := path
	if r, ok := relTo(ws.root, path); ok {
		shownPath = r
	}
	return finding{loc: c.file, warning: true, msg: fmt.Sprintf("hook program %s is missing or not executable", shownPath),
		hint: "build it: make install PREFIX=" + shellQuote(filepath.Dir(filepath.Dir(path))) + " in the stopgate source"}, true
}

func relTo(root, path string) (string, bool) {
	r, err := filepath.Rel(root, path)
	if err != nil || r == ".." || len(r) > 2 && r[:3] == "../" {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// clientNotes are what the checked clients lack that a stopgate feature
// needs, printed under the findings.
func clientNotes(env *cli.Env, cs []*agentClient) {
	for _, c := range cs {
		for _, l := range c.limits {
			fmt.Fprintf(env.Stdout, "note: %s: %s\n", c.name, l)
		}
	}
}

// checkedClients are the clients `gate check` looks at: the one --client
// names, or every client whose file the project has.
func checkedClients(root, name string) ([]*agentClient, error) {
	if name != "" {
		c, err := clientNamed(name)
		if err != nil || c == nil {
			return nil, err
		}
		return []*agentClient{c}, nil
	}
	var out []*agentClient
	for _, c := range agentClients {
		if c.registered(root) {
			out = append(out, c)
		}
	}
	return out, nil
}
