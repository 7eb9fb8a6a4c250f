package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"text/tabwriter"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/statedir"
)

// statusJSON is `gate status --json`.
type statusJSON struct {
	StateDir string        `json:"state_dir"`
	Pending  int           `json:"pending"`
	Scopes   []scopeJSON   `json:"scopes"`
	SetAside []setAsideRef `json:"set_aside"`
}

type scopeJSON struct {
	Session   string      `json:"session_id"`
	Agent     string      `json:"agent_id,omitempty"`
	AgentType string      `json:"agent_type,omitempty"`
	Blocks    int         `json:"blocks"`
	MaxBlocks int         `json:"max_blocks"`
	Entries   []entryJSON `json:"entries"`
}

type entryJSON struct {
	Prompt     string    `json:"prompt"`
	Trigger    string    `json:"trigger"`
	Path       string    `json:"path,omitempty"`
	Arms       int       `json:"arms"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	AgeSeconds int64     `json:"age_seconds"`
}

type setAsideRef struct {
	Path string `json:"path"`
	Note string `json:"note,omitempty"`
}

// runStatus is `gate status`: what is pending, per session and scope, how
// old, how many stops were blocked in a row, and what was set aside as
// unreadable. It only reads, except that, like the gate, it moves an
// unreadable entry it meets to the quarantine.
func runStatus(env *cli.Env, args []string) error {
	fl := flags("status")
	configFile := configFlag(fl)
	asJSON := jsonFlag(fl)
	if err := parseFlags(env, fl, args); err != nil {
		return err
	}
	ws := workspaceOf(env, *configFile)
	dir := ws.stateDir()
	maxBlocks := config.DefaultMaxBlocks
	if cfg, _, _ := config.Inspect(ws.file, ws.root, config.FileOnly); cfg != nil {
		maxBlocks = cfg.Settings.MaxBlocks
	}
	st := statusJSON{StateDir: ws.rel(dir), Scopes: []scopeJSON{}, SetAside: []setAsideRef{}}

	if _, err := os.Stat(dir); err == nil {
		q := queue.Open(dir)
		scopes, bad, err := q.List()
		var held *statedir.HeldError
		if errors.As(err, &held) {
			return cli.WithHint(err,
				"every stopgate hook waits for this lock: meanwhile a stop with prompts armed halts, and detect cannot arm",
				"end the process holding it; stopgate's own hooks hold it for milliseconds only")
		}
		if err != nil {
			return err
		}
		now := time.Now()
		for _, p := range scopes {
			s := scopeJSON{Session: p.Scope.Session, Agent: p.Scope.Agent, Blocks: p.Blocks, MaxBlocks: maxBlocks, Entries: []entryJSON{}}
			for _, e := range p.Entries {
				if e.AgentType != "" {
					s.AgentType = e.AgentType
				}
				s.Entries = append(s.Entries, entryJSON{
					Prompt: e.Prompt, Trigger: e.Trigger, Path: e.Path, Arms: e.Arms,
					Created: e.Created, Updated: e.Updated, AgeSeconds: int64(now.Sub(e.Created).Seconds()),
				})
			}
			st.Pending += len(p.Entries)
			st.Scopes = append(st.Scopes, s)
		}
		aside, err := q.SetAside()
		if err != nil {
			return err
		}
		notes := map[string]string{}
		for _, b := range bad {
			notes[b.Path] = b.Error.Error()
		}
		for _, a := range aside {
			st.SetAside = append(st.SetAside, setAsideRef{Path: ws.rel(a), Note: notes[a]})
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}

	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	printStatus(env, ws, st)
	return nil
}

func printStatus(env *cli.Env, ws workspace, st statusJSON) {
	w := env.Stdout
	if len(st.Scopes) == 0 {
		fmt.Fprintf(w, "%s: nothing pending\n", st.StateDir)
	} else {
		fmt.Fprintf(w, "%s: %s pending in %s\n", st.StateDir, cli.Plural(st.Pending, "prompt", "prompts"), cli.Plural(len(st.Scopes), "scope", "scopes"))
	}
	for _, s := range st.Scopes {
		who := "main thread"
		if s.Agent != "" {
			who = "agent " + s.Agent
			if s.AgentType != "" {
				who += " (" + s.AgentType + ")"
			}
		}
		line := fmt.Sprintf("\nsession %s, %s: %d pending", s.Session, who, len(s.Entries))
		if s.Blocks > 0 {
			line += fmt.Sprintf("; %s in a row (the session halts after %d)", cli.Plural(s.Blocks, "blocked stop", "blocked stops"), s.MaxBlocks)
		}
		fmt.Fprintln(w, line)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range s.Entries {
			arms := ""
			if e.Arms > 1 {
				arms = fmt.Sprintf(" (armed %d times)", e.Arms)
			}
			fmt.Fprintf(tw, "  %s\t%s old\t%s%s\n", e.Prompt, age(time.Duration(e.AgeSeconds)*time.Second), armedBy(ws, e), arms)
		}
		tw.Flush()
	}
	if len(st.SetAside) > 0 {
		fmt.Fprintf(w, "\nset aside as unreadable (kept for inspection): %s\n", cli.Plural(len(st.SetAside), "file", "files"))
		for _, a := range st.SetAside {
			fmt.Fprintf(w, "  %s\n", a.Path)
		}
	}
}

// armedBy says what armed an entry, in the words of what the agent did.
func armedBy(ws workspace, e entryJSON) string {
	switch e.Trigger {
	case queue.TriggerRead:
		return "read " + ws.rel(e.Path)
	case queue.TriggerCommand:
		return "ran /" + config.Command(e.Prompt)
	case queue.TriggerPrompt:
		return "prompt /" + config.Command(e.Prompt)
	}
	return e.Trigger
}

// age writes a duration the way a person says it: 42s, 5m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
