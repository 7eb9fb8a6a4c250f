package config

import (
	"errors"
	"strings"
	"testing"
)

// catalogueBase is a realistic mappings.toml; each catalogue case breaks
// one line of it, so that every mistake is located among others.
const catalogueBase = `# stopgate mappings
[settings]
prompts_dir = "src/prompts"
max_blocks = 3

[[mapping]]
prompt = "joke"
validators = ["joke-file"]

[[mapping]]
prompt = "git/worktrees/create"
validators = ["worktree"]

[validators.joke-file]
file = "output/joke.txt"
contains = "joke"

[validators.worktree]
run = "validators/validate-worktree.sh"
timeout = "10s"
`

// edit replaces lines of catalogueBase, by 1-based number, with text
// (which may span lines, or be empty to blank the line).
func edit(repl map[int]string) string {
	ls := strings.Split(catalogueBase, "\n")
	for n, text := range repl {
		ls[n-1] = text
	}
	return strings.Join(ls, "\n")
}

// catalogueCase is one mistake in mappings.toml and what the loader says.
type catalogueCase struct {
	name string
	toml string
	want []string // every problem, exactly, in order
	hint bool     // the first problem has a hint
}

// catalogue is every mistake the loader knows; FuzzParseConfig starts from
// it too.
func catalogue() []catalogueCase {
	return []catalogueCase{
		// Syntax errors, located by the TOML decoder.
		{"unterminated string", edit(map[int]string{7: `prompt = "joke`}),
			[]string{`mappings.toml:7: mapping.prompt: strings cannot contain newlines`}, false},
		{"unterminated table header", edit(map[int]string{14: `[validators.joke-file`}),
			[]string{`mappings.toml:14: expected '.' or ']' to end table name, but got '\n' instead`}, false},
		{"duplicate key", edit(map[int]string{16: `file = "again"`}),
			[]string{`mappings.toml:16: validators.joke-file.file: Key 'validators.joke-file.file' has already been defined.`}, false},
		{"duplicate table", edit(map[int]string{18: `[validators.joke-file]`}),
			[]string{`mappings.toml:18: Key 'validators.joke-file' has already been defined.`}, false},

		// Unknown keys, in each table.
		{"unknown top-level key", edit(map[int]string{1: `version = 2`}),
			[]string{`mappings.toml:1: version: unknown key`}, true},
		{"unknown top-level table", edit(map[int]string{5: "[extras]"}),
			[]string{`mappings.toml:5: extras: unknown key`}, true},
		{"unknown settings key", edit(map[int]string{4: `max_block = 3`}),
			[]string{`mappings.toml:4: settings.max_block: unknown key`}, true},
		{"unknown key in the second mapping", edit(map[int]string{12: `validators = ["worktree"]` + "\n" + `validator = ["worktree"]`}),
			[]string{`mappings.toml:13: mapping.validator: unknown key`}, true},
		{"same unknown key in two mappings", edit(map[int]string{8: `validators = ["joke-file"]` + "\nnote = 1", 12: `validators = ["worktree"]` + "\nnote = 2"}),
			[]string{`mappings.toml:9: mapping.note: unknown key`, `mappings.toml:14: mapping.note: unknown key`}, true},
		{"unknown validator key", edit(map[int]string{16: `contain = "joke"`}),
			[]string{`mappings.toml:16: validators.joke-file.contain: unknown key`}, true},
		{"key in other letter case", edit(map[int]string{7: `Prompt = "joke"`}),
			[]string{`mappings.toml:7: mapping.Prompt: unknown key`}, true},
		{"table in other letter case", edit(map[int]string{10: `[[Mapping]]`}),
			[]string{`mappings.toml:10: Mapping: unknown key`}, true},
		{"validator key in other letter case", edit(map[int]string{19: `RUN = "validators/validate-worktree.sh"`}),
			[]string{`mappings.toml:19: validators.worktree.RUN: unknown key`}, true},

		// Wrong types, said in TOML's words.
		{"string for an integer", edit(map[int]string{4: `max_blocks = "3"`}),
			[]string{`mappings.toml:4: settings.max_blocks: is a string, want an integer`}, false},
		{"integer for a duration", edit(map[int]string{20: `timeout = 10`}),
			[]string{`mappings.toml:20: validators.worktree.timeout: is an integer, want a string`}, true},
		{"string for a list", edit(map[int]string{8: `validators = "joke-file"`}),
			[]string{`mappings.toml:8: mapping.validators: is a string, want an array`}, true},
		{"list for a string", edit(map[int]string{15: `file = ["output/joke.txt"]`}),
			[]string{`mappings.toml:15: validators.joke-file.file: is an array, want a string`}, false},
		{"string for a boolean", edit(map[int]string{4: `announce = "yes"`}),
			[]string{`mappings.toml:4: settings.announce: is a string, want a boolean`}, false},
		{"validator that is not a table", "[validators]\nworktree = \"validators/x.sh\"\n",
			[]string{`mappings.toml:2: validators.worktree: is a string, want a table`}, true},
		{"mapping that is not an array of tables", "mapping = \"joke\"\n",
			[]string{`mappings.toml:1: mapping: is a string, want an array of tables`}, true},
		{"wrong type in the first of two mappings", edit(map[int]string{8: `validators = ["joke-file", 1]`}),
			[]string{`mappings.toml:8: mapping.validators: is an integer, want a string`}, true},
		{"validators that is not a table", "validators = 1\n",
			[]string{`mappings.toml:1: validators: is an integer, want a table`}, false},
		{"validators as an array of tables", "[[validators]]\nfile = \"x\"\n",
			[]string{`mappings.toml:1: validators: is an array, want a table`}, false},

		// Validators.
		{"file and run", edit(map[int]string{16: `run = "true"`}),
			[]string{`mappings.toml:14: validators.joke-file: has both file and run`}, true},
		{"neither file nor run", edit(map[int]string{19: `fix = "make it so"`}),
			[]string{`mappings.toml:18: validators.worktree: needs file, run or a diff check`}, true},
		{"contains on a run validator", edit(map[int]string{20: `contains = "ok"`}),
			[]string{`mappings.toml:18: validators.worktree: contains, not_contains and regex apply to file validators only`}, true},
		{"bad regex", edit(map[int]string{16: `regex = "^(joke"`}),
			[]string{"mappings.toml:16: validators.joke-file.regex: does not compile: missing closing ): `^(joke`"}, true},
		{"bad duration", edit(map[int]string{20: `timeout = "10 seconds"`}),
			[]string{`mappings.toml:20: validators.worktree.timeout: "10 seconds" is not a positive duration`}, true},
		{"zero duration", edit(map[int]string{20: `timeout = "0s"`}),
			[]string{`mappings.toml:20: validators.worktree.timeout: "0s" is not a positive duration`}, true},
		{"validator in dotted keys", edit(map[int]string{1: `validators.extra.file = "a"` + "\n" + `validators.extra.run = "b"`}),
			[]string{`mappings.toml:1: validators.extra: has both file and run`}, true},
		{"validator as an inline table", edit(map[int]string{19: `run = "x"`, 20: "[validators]\ninline = { file = \"a\", run = \"b\" }"}),
			[]string{`mappings.toml:21: validators.inline: has both file and run`}, true},

		// Mappings.
		{"undefined validator", edit(map[int]string{12: `validators = ["worktree", "worktre"]`}),
			[]string{`mappings.toml:12: mapping[1].validators: validator "worktre" is not defined`}, true},
		{"undefined validator in a multi-line list", edit(map[int]string{12: "validators = [\n  \"worktree\",\n  \"nope\",\n]"}),
			[]string{`mappings.toml:12: mapping[1].validators: validator "nope" is not defined`}, true},
		{"no validators", edit(map[int]string{12: `validators = []`}),
			[]string{`mappings.toml:12: mapping[1].validators: no validators`}, true},
		{"missing validators", edit(map[int]string{12: ""}),
			[]string{`mappings.toml:10: mapping[1].validators: no validators`}, true},
		{"missing prompt", edit(map[int]string{11: ""}),
			[]string{`mappings.toml:10: mapping[1].prompt: missing prompt`}, true},
		{"duplicate prompt key", edit(map[int]string{11: `prompt = "joke"`}),
			[]string{`mappings.toml:11: mapping[1].prompt: prompt "joke" is mapped twice (first on line 6)`}, true},
		{"prompt key with .md", edit(map[int]string{11: `prompt = "git/worktrees/create.md"`}),
			[]string{`mappings.toml:11: mapping[1].prompt: prompt "git/worktrees/create.md" ends in .md`}, true},
		{"prompt key with ..", edit(map[int]string{11: `prompt = "../create"`}),
			[]string{`mappings.toml:11: mapping[1].prompt: prompt "../create" is not a clean relative path`}, true},
		{"prompt key with inner ..", edit(map[int]string{11: `prompt = "git/../create"`}),
			[]string{`mappings.toml:11: mapping[1].prompt: prompt "git/../create" is not a clean relative path`}, true},
		{"absolute prompt key", edit(map[int]string{11: `prompt = "/git/worktrees/create"`}),
			[]string{`mappings.toml:11: mapping[1].prompt: prompt "/git/worktrees/create" is not a clean relative path`}, true},

		// Settings.
		{"max_blocks zero", edit(map[int]string{4: `max_blocks = 0`}),
			[]string{`mappings.toml:4: settings.max_blocks: 0 is out of range 1..8`}, true},
		{"max_blocks negative", edit(map[int]string{4: `max_blocks = -1`}),
			[]string{`mappings.toml:4: settings.max_blocks: -1 is out of range 1..8`}, true},
		{"max_blocks at the client's cap", edit(map[int]string{4: `max_blocks = 9`}),
			[]string{`mappings.toml:4: settings.max_blocks: 9 is out of range 1..8`}, true},
		{"bad on_failure", edit(map[int]string{4: `on_failure = "stop"`}),
			[]string{`mappings.toml:4: settings.on_failure: "stop" is not a policy`}, true},
		{"empty prompts_dir", edit(map[int]string{3: `prompts_dir = ""`}),
			[]string{`mappings.toml:3: settings.prompts_dir: must not be empty`}, true},
		{"empty state_dir", edit(map[int]string{3: `state_dir = ""`}),
			[]string{`mappings.toml:3: settings.state_dir: must not be empty`}, true},
		{"bad settings timeout", edit(map[int]string{3: `timeout = "forever"`}),
			[]string{`mappings.toml:3: settings.timeout: "forever" is not a positive duration`}, true},
		{"output_lines zero", edit(map[int]string{3: `output_lines = 0`}),
			[]string{`mappings.toml:3: settings.output_lines: 0 must be at least 1`}, false},

		// Layout the line scan must see through.
		{"CRLF line endings", strings.ReplaceAll(edit(map[int]string{16: `contain = "joke"`}), "\n", "\r\n"),
			[]string{`mappings.toml:16: validators.joke-file.contain: unknown key`}, true},
		{"table header with a comment", edit(map[int]string{18: `[validators.worktree] # the worktree check`, 20: `timeout = "soon"`}),
			[]string{`mappings.toml:20: validators.worktree.timeout: "soon" is not a positive duration`}, true},
		{"multi-line string before the mistake", edit(map[int]string{16: "fix = \"\"\"\nmax_blocks = 0\n[settings]\n\"\"\"\ncontain = \"joke\""}),
			[]string{`mappings.toml:20: validators.joke-file.contain: unknown key`}, true},
		{"byte-order mark", "\ufeff" + edit(map[int]string{16: `contain = "joke"`}),
			[]string{`mappings.toml:16: validators.joke-file.contain: unknown key`}, true},
		{"quoted header with a quoting comment", edit(map[int]string{18: `[validators."worktree"] # the "worktree" check`, 20: `timeout = "soon"`}),
			[]string{`mappings.toml:20: validators.worktree.timeout: "soon" is not a positive duration`}, true},
		{"triple quotes inside a one-line string", edit(map[int]string{15: `file = "out'''put.txt"`, 16: `contain = "joke"`}),
			[]string{`mappings.toml:16: validators.joke-file.contain: unknown key`}, true},
		{"escaped quote in a key", edit(map[int]string{18: `[validators."work\"tree"]`, 20: `timeout = "soon"`}),
			[]string{`mappings.toml:20: validators.work"tree.timeout: "soon" is not a positive duration`,
				`mappings.toml:12: mapping[1].validators: validator "worktree" is not defined`}, true},
		{"several mistakes, in file order", edit(map[int]string{4: `max_blocks = 0`, 16: `contain = "joke"`, 20: `timeout = "x"`}),
			[]string{
				`mappings.toml:16: validators.joke-file.contain: unknown key`,
				`mappings.toml:4: settings.max_blocks: 0 is out of range 1..8`,
				`mappings.toml:20: validators.worktree.timeout: "x" is not a positive duration`,
			}, true},
	}
}

// TestCatalogue is every mistake the loader knows, each located at its
// exact line and key, with a hint where one helps. These are what the gate
// halts a stop with, and what `gate check` prints.
func TestCatalogue(t *testing.T) {
	t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "")
	if _, err := Parse([]byte(catalogueBase), "/p/mappings.toml", "/p"); err != nil {
		t.Fatalf("the base config must load: %v", err)
	}
	for _, tt := range catalogue() {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.toml), "/p/mappings.toml", "/p")
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("err = %v, want Problems", err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.Error())
				if p.File != "mappings.toml" || p.Line == 0 {
					t.Errorf("%s: want file mappings.toml and a line", p.Error())
				}
				if strings.ContainsAny(p.Msg, "\n") {
					t.Errorf("%s: message is not one line", p.Error())
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
			if tt.hint && ps[0].Hint == "" {
				t.Errorf("%s: no hint", ps[0].Error())
			}
		})
	}
}
