package guard

import (
	"slices"
	"strings"
)

// opts is a command's options, parsed getopt-style.
type opts struct {
	ops   []word
	vals  map[string][]word // option → values, short as "t", long as "target-directory"
	flags map[string]bool   // options seen, short letters and long names
}

func (o opts) has(names ...string) bool {
	for _, n := range names {
		if o.flags[n] {
			return true
		}
	}
	return false
}

func (o opts) val(names ...string) []word {
	var out []word
	for _, n := range names {
		out = append(out, o.vals[n]...)
	}
	return out
}

func lit(t string) word { return word{pats: []string{escape(t)}, text: t} }

// parseOpts splits args into options and operands. short lists the letters
// that take a value, long the long options that do (without "--").
func parseOpts(args []word, short string, long ...string) opts {
	o := opts{vals: map[string][]word{}, flags: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		w := args[i]
		t := w.text
		switch {
		case w.unknown || t == "-" || !strings.HasPrefix(t, "-"):
			o.ops = append(o.ops, w)
		case t == "--":
			o.ops = append(o.ops, args[i+1:]...)
			return o
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			o.flags[name] = true
			if eq {
				o.vals[name] = append(o.vals[name], lit(val))
			} else if slices.Contains(long, name) && i+1 < len(args) {
				i++
				o.vals[name] = append(o.vals[name], args[i])
			}
		default:
			for j := 1; j < len(t); j++ {
				f := t[j : j+1]
				o.flags[f] = true
				if strings.Contains(short, f) {
					if j+1 < len(t) {
						o.vals[f] = append(o.vals[f], lit(t[j+1:]))
					} else if i+1 < len(args) {
						i++
						o.vals[f] = append(o.vals[f], args[i])
					}
					break
				}
			}
		}
	}
	return o
}
