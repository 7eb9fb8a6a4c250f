package gate

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/report"
)

// defaultReport is gate report's file, in the current folder.
const defaultReport = "stopgate-report.html"

// runReport is `gate report`: the outcome log as one HTML page. The page
// is rendered whole before anything is written, and replaces the file at
// once: a bad flag or a failure leaves no page, and no half of one.
func runReport(env *cli.Env, args []string) error {
	fl := flags("report")
	configFile := configFlag(fl)
	sinceFlag := sinceFlag(fl)
	out := fl.String("out", defaultReport, "the HTML `FILE` to write")
	if err := parseFlags(env, fl, args); err != nil {
		return err
	}
	since, err := parseSince(*sinceFlag, time.Now())
	if err != nil {
		return usageError("report", err)
	}
	ws := workspaceOf(env, *configFile)
	records, err := readOutcomes(env, ws.stateDir(), since)
	if err != nil {
		return err
	}
	var page bytes.Buffer
	if err := report.Write(&page, records, "stopgate: "+filepath.Base(ws.root), time.Now()); err != nil {
		return err
	}
	path := *out
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.Dir, path)
	}
	if err := atomicfile.Write(path, page.Bytes(), atomicfile.Options{TempPrefix: ".stopgate-report-", Perm: 0o644, NoSync: true}); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprintf(env.Stdout, "wrote %s: %s\n", *out, plural(len(records), "decision", "decisions"))
	return nil
}
