// Command dist makes stopgate's release in dist/ (make dist; package dist).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/stopgate/stopgate/internal/dist"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "dist: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	o := dist.Options{Log: os.Stderr}
	fl := flag.NewFlagSet("dist", flag.ContinueOnError)
	fl.StringVar(&o.Go, "go", "go", "the go command")
	fl.StringVar(&o.Src, "src", ".", "the stopgate repository")
	fl.StringVar(&o.Rev, "rev", "", "the commit to release (default HEAD)")
	fl.StringVar(&o.Out, "out", "dist", "the output directory (emptied first)")
	platforms := fl.String("platforms", strings.Join(dist.Platforms, ","), "GOOS/GOARCH list")
	if err := fl.Parse(args); err != nil {
		return err
	}
	o.Platforms = strings.Split(*platforms, ",")
	return dist.Build(o)
}
