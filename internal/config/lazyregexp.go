package config

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regexp compiled on first use. The patterns that read the
// TOML decoder's error messages serve only configs with mistakes; compiled
// at package init they would cost every hook that loads a config a tenth of
// its start-up.
type lazyRegexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

func lazyRE(src string) *lazyRegexp { return &lazyRegexp{src: src} }

func (l *lazyRegexp) FindStringSubmatch(s string) []string {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re.FindStringSubmatch(s)
}
