package guard

import (
	"path"
	"strings"
)

// maxDepth bounds nesting: $(…) in bash -c in eval …
const maxDepth = 8

// analyzer walks the simple commands of one Bash tool call in order,
// tracking what the text itself determines: the working directory (cd),
// variables assigned literally (D=tmp; for f in tmp/*), $CLAUDE_PROJECT_DIR,
// $HOME and $PWD.
type analyzer struct {
	set   *Set
	cwd   string // "" once unknown (cd $X)
	vars  map[string][]string
	depth int
}

// word is a word after expansion: the patterns it stands for.
type word struct {
	pats    []string // clean glob patterns, literal characters escaped
	text    string   // the first pattern unescaped, for flags and messages
	unknown bool     // part of it has no static value
}

// CheckBash judges a Bash command run in cwd.
func (s *Set) CheckBash(cmd, cwd string) *Hit {
	if s.Empty() || strings.TrimSpace(cmd) == "" {
		return nil
	}
	a := &analyzer{set: s, cwd: path.Clean(slash(cwd)), vars: map[string][]string{
		"CLAUDE_PROJECT_DIR": {escape(s.root)},
	}}
	if s.home != "" {
		a.vars["HOME"] = []string{escape(s.home)}
	}
	return a.script(cmd)
}

func (a *analyzer) script(src string) *Hit {
	if a.depth > maxDepth {
		return nil
	}
	cmds, nested := lex(src)
	for _, n := range nested {
		if h := a.child().script(n); h != nil {
			return h
		}
	}
	for _, c := range cmds {
		if h := a.command(c, cmds); h != nil {
			return h
		}
	}
	return nil
}

// child is an analyzer for a nested shell: it starts where a is, and what
// it changes (cd, variables) stays inside.
func (a *analyzer) child() *analyzer {
	vars := make(map[string][]string, len(a.vars))
	for k, v := range a.vars {
		vars[k] = v
	}
	return &analyzer{set: a.set, cwd: a.cwd, vars: vars, depth: a.depth + 1}
}

func (a *analyzer) expand(w rawWord) word {
	alts := []string{""}
	unknown := false
	for _, p := range w {
		var vals []string
		switch p.kind {
		case partLit:
			vals = []string{p.text}
		case partParam:
			if p.text == "PWD" && a.cwd != "" {
				vals = []string{escape(a.cwd)}
			} else if v, ok := a.vars[p.text]; ok && len(v) > 0 {
				vals = v
			} else {
				unknown = true
				continue
			}
		case partTilde:
			if a.set.home == "" {
				unknown = true
				continue
			}
			vals = []string{escape(a.set.home)}
		default:
			unknown = true
			continue
		}
		var next []string
		for _, x := range alts {
			for _, v := range vals {
				if len(next) < maxWords {
					next = append(next, x+v)
				}
			}
		}
		alts = next
	}
	var pats []string
	for _, x := range alts {
		for _, b := range braces(x) {
			if len(pats) < maxWords {
				pats = append(pats, b)
			}
		}
	}
	return word{pats: pats, text: unescape(pats[0]), unknown: unknown}
}

func (a *analyzer) expandAll(ws []rawWord) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		out = append(out, a.expand(w))
	}
	return out
}

// target judges an operation in mode m on the path w names.
func (a *analyzer) target(w word, m mode, c *command) *Hit {
	if w.unknown || w.text == "" {
		return nil // $X, $(…): nothing static to judge (see docs/security.md)
	}
	for _, p := range w.pats {
		bases := []string{a.cwd}
		if strings.HasPrefix(p, "/") {
			bases = []string{"/"}
		} else if a.cwd == "" {
			bases = a.set.cwds // cd to somewhere unknown: wherever it could reach a protected path from
		}
		for _, b := range bases {
			abs := absolute(p, escape(b))
			if t := a.set.hit(abs, hasMeta(abs), m); t != nil {
				return &Hit{Protected: t.Protected, Target: w.text, By: c.src}
			}
		}
	}
	return nil
}

// mention judges program text an interpreter runs.
func (a *analyzer) mention(code string, c *command) *Hit {
	if t := a.set.mentions(code); t != nil {
		return &Hit{Protected: t.Protected, By: c.src}
	}
	return nil
}

// reserved words that may open a simple command and are not its name.
var reserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"while": true, "until": true, "!": true, "{": true, "}": true, "time": true, "esac": true,
	"coproc": true,
}

func (a *analyzer) command(c *command, all []*command) *Hit {
	for _, r := range c.redirects {
		if h := a.target(a.expand(r.target), under, c); h != nil {
			return h
		}
	}
	raw := c.words
	for len(raw) > 0 && reserved[literal(raw[0])] && len(raw[0]) == 1 && raw[0][0].kind == partLit {
		raw = raw[1:]
	}
	// Leading NAME=value words: alone they set variables for what follows;
	// before a command they are its environment only.
	n := 0
	for n < len(raw) && isAssignment(raw[n]) {
		n++
	}
	if n == len(raw) {
		for _, w := range raw {
			a.assign(w)
		}
		return a.stdin(c, nil, all)
	}
	return a.run(a.expandAll(raw[n:]), c, all)
}

// assign records NAME=value.
func (a *analyzer) assign(w rawWord) {
	name, value, _ := strings.Cut(w[0].text, "=")
	rest := append(rawWord{{kind: partLit, text: value}}, w[1:]...)
	v := a.expand(rest)
	if v.unknown {
		delete(a.vars, name)
		return
	}
	a.vars[name] = v.pats
}

// stdin judges what the command reads as a program from here-documents:
// nothing, unless it is a shell or an interpreter (prog says which).
func (a *analyzer) stdin(c *command, prog func(string) *Hit, all []*command) *Hit {
	if prog == nil {
		return nil
	}
	for _, body := range c.stdin {
		if h := prog(body); h != nil {
			return h
		}
	}
	// A program piped in: judge the other commands' words of the pipeline,
	// as in echo 'rm -rf tmp' | sh.
	for _, o := range all {
		if o == c || o.pipeline != c.pipeline {
			continue
		}
		for _, w := range o.words {
			if h := prog(literal(w)); h != nil {
				return h
			}
		}
	}
	return nil
}

// run judges one command, its expanded words ws, by its name.
func (a *analyzer) run(ws []word, c *command, all []*command) *Hit {
	if len(ws) == 0 || ws[0].unknown {
		return nil
	}
	name := path.Base(ws[0].text)
	args := ws[1:]
	if w, ok := wrappers[name]; ok {
		skip := w(args)
		if skip < 0 || skip >= len(args) {
			return nil
		}
		return a.run(args[skip:], c, all)
	}
	if r, ok := rules[name]; ok {
		return r(a, args, c, all)
	}
	if interpreterNames[name] || strings.HasPrefix(name, "python") {
		return a.interpreter(name, args, c, all)
	}
	return nil
}

// each judges every word in mode m.
func (a *analyzer) each(ws []word, m mode, c *command) *Hit {
	for _, w := range ws {
		if h := a.target(w, m, c); h != nil {
			return h
		}
	}
	return nil
}

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

// parse splits args into options and operands. short lists the letters
// that take a value, long the long options that do (without "--").
func parse(args []word, short string, long ...string) opts {
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
				o.vals[name] = append(o.vals[name], word{pats: []string{escape(val)}, text: val})
			} else if contains(long, name) && i+1 < len(args) {
				i++
				o.vals[name] = append(o.vals[name], args[i])
			}
		default:
			for j := 1; j < len(t); j++ {
				f := t[j : j+1]
				o.flags[f] = true
				if strings.Contains(short, f) {
					if j+1 < len(t) {
						v := t[j+1:]
						o.vals[f] = append(o.vals[f], word{pats: []string{escape(v)}, text: v})
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

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
