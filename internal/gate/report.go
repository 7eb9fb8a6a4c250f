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
	out := fl.String("out", defaultReport, "the HTML `FILE` to write")
	d, err := readDecisions(env, fl, args)
	if err != nil {
		return err
	}
	var page bytes.Buffer
	if err := report.Write(&page, d.records, "stopgate: "+filepath.Base(d.ws.root), time.Now()); err != nil {
		return err
	}
	if err := atomicfile.Write(absFrom(env.Dir, *out), page.Bytes(), atomicfile.Options{TempPrefix: ".stopgate-report-", Perm: 0o644, NoSync: true}); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprintf(env.Stdout, "wrote %s: %s\n", *out, cli.Plural(len(d.records), "decision", "decisions"))
	return nil
}
