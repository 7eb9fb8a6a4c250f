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
	o := dist.Options{Log: os.Stderr}
	flag.StringVar(&o.Go, "go", "go", "the go command")
	flag.StringVar(&o.Src, "src", ".", "the stopgate repository")
	flag.StringVar(&o.Rev, "rev", "", "the commit to release (default HEAD)")
	flag.StringVar(&o.Out, "out", "dist", "the output directory (emptied first)")
	platforms := flag.String("platforms", strings.Join(dist.Platforms, ","), "GOOS/GOARCH list")
	flag.Parse()
	o.Platforms = strings.Split(*platforms, ",")
	if err := dist.Build(o); err != nil {
		fmt.Fprintf(os.Stderr, "dist: %v\n", err)
		os.Exit(1)
	}
}
