package gate

import (
	"errors"
	"fmt"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/telemetry"
)

// telemetryCheck is gate check's line on telemetry: where it goes, when
// [telemetry] says anything (off, the default, says nothing), and a
// warning when it is on and its exporter cannot be found.
func telemetryCheck(env *cli.Env, ws workspace, cfg *config.Config) (string, []finding) {
	if cfg == nil {
		return "", nil
	}
	t := cfg.Telemetry
	if !t.Enabled && t.Endpoint == "" {
		return "", nil
	}
	line := "telemetry: " + telemetry.Describe(t, env.Getenv)
	if !telemetry.Enabled(t, env.Getenv) {
		return line, nil
	}
	if _, err := telemetry.ExporterPath(); err != nil {
		return line, []finding{{loc: ws.rel(ws.file), warning: true, msg: "telemetry is on, but " + err.Error(),
			hint: "stops are judged and logged as ever; nothing is exported until it is installed"}}
	}
	return line, nil
}

// exportLog is `gate log --export`: the decisions read, sent over OTLP
// as the hook sends each, in one request bounded by timeout.
func exportLog(env *cli.Env, d *decisions, timeout time.Duration) error {
	cfg, err := d.ws.load()
	if err != nil {
		return err
	}
	if !telemetry.Enabled(cfg.Telemetry, env.Getenv) {
		return cli.WithHint(errors.New("telemetry is off: nothing to export to"), "[telemetry] enabled = true in mappings.toml turns it on; gate check shows where it goes")
	}
	if len(d.records) == 0 {
		fmt.Fprint(env.Stdout, d.none)
		return nil
	}
	req := telemetry.Request{Config: cfg.Telemetry, Root: d.ws.root, Deadline: timeout, Records: d.records}
	if err := telemetry.Send(req); err != nil {
		return fmt.Errorf("telemetry export failed: %w", err)
	}
	fmt.Fprintf(env.Stdout, "exported %s: %s\n", cli.Plural(len(d.records), "decision", "decisions"), telemetry.Describe(cfg.Telemetry, env.Getenv))
	return nil
}
