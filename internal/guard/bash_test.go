package guard

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/shell"
)

// project lays out a stopgate project in a temp dir and returns its root
// and protected set: the default state dir, mappings.toml, a run validator
// in validators/, and scripts/check.sh, a validator outside validators/.
func project(t *testing.T, protect []string) (string, *Set) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{
		"mappings.toml", "validators/validate-worktree.sh", "validators/lib.sh", "scripts/check.sh",
		"scripts/other.sh", "src/prompts/joke.md", "tmp/validation/lock", "tmp/other/x", "output/joke.txt",
		".claude/settings.json",
	} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, testSet(Source{
		Root: root, Home: "/home/agent", File: filepath.Join(root, "mappings.toml"),
		StateDir: filepath.Join(root, "tmp/validation"), Protect: protect,
		Transcript: "/home/agent/.claude/projects/-p/s1.jsonl",
		Runs: []Run{
			{Name: "worktree", Command: "validators/validate-worktree.sh --strict"},
			{Name: "check", Command: `sh "$CLAUDE_PROJECT_DIR/scripts/check.sh"`},
			{Name: "tests", Command: "go test ./..."},
		},
	})
}

// bashCase is one Bash command and the protected path it hits ("" when
// allowed, "*" for a conservative deny of a command the guard could not
// follow, which names the path it protects).
type bashCase struct {
	cmd  string
	want string
}

// existingCases are the commands judged before the guard moved to
// mvdan.cc/sh; each keeps its verdict. root is the project's root.
func existingCases(root string) []bashCase {
	return []bashCase{
		// Reading is always allowed, and so is writing elsewhere.
		{"cat mappings.toml", ""},
		{"grep -r x tmp/validation", ""},
		{"ls -la tmp/validation/sessions", ""},
		{"cat tmp/validation/sessions/s/main/joke.json | jq .", ""},
		{"diff mappings.toml /tmp/m.toml", ""},
		{"git diff mappings.toml; git log -- mappings.toml", ""},
		{"bin/gate status", ""},
		{"cp mappings.toml /tmp/backup.toml", ""},
		{"sed -n 1,10p mappings.toml", ""},
		{"awk '{print $1}' mappings.toml", ""},
		{"echo hi > output/joke.txt", ""},
		{"echo x > mappings.toml.bak", ""},
		{"rm mappings.tomlx tmp/other/x", ""},
		{"rm -rf tmp/other", ""},
		{"rm -f *.o", ""},
		{"chmod +x scripts/other.sh", ""},
		{"mv a b && cp c d", ""},
		{"x=$(cat mappings.toml)", ""},
		{"./validators/validate-worktree.sh", ""},
		{"sh validators/validate-worktree.sh", ""},
		{"python3 -c 'print(1)'", ""},
		{"find src -name '*.bak' -delete", ""},
		{"find . -name '*.go' -exec grep -l foo {} +", ""},
		{"git checkout main && git status", ""},
		{"git clean -fd", ""},
		{"git clean -n -x", ""},
		{"git restore --staged mappings.toml", ""},
		{"go build -o bin/ ./cmd/...", ""},
		{"touch output/joke.txt && mkdir -p output/more", ""},
		{"tee output/log.txt < mappings.toml", ""},
		// Quoted or commented text is not a redirection or a command.
		{`echo "> tmp/validation"`, ""},
		{`echo 'rm -rf tmp/validation'`, ""},
		{`printf '%s\n' "sed -i s/a/b/ mappings.toml"`, ""},
		{"ls # rm -rf tmp/validation", ""},
		{"cat <<'EOF'\nrm -rf tmp/validation\nEOF", ""},
		{`grep ">" mappings.toml`, ""},
		// A variable the text does not set cannot be judged.
		{`rm -rf "$BUILD_DIR"`, ""},

		// Redirections.
		{"echo x > mappings.toml", "mappings.toml"},
		{"echo x >> mappings.toml", "mappings.toml"},
		{": >mappings.toml", "mappings.toml"},
		{">mappings.toml", "mappings.toml"},
		{"make 2>mappings.toml", "mappings.toml"},
		{"make &> tmp/validation/log", "tmp/validation"},
		{"make &>>tmp/validation/log", "tmp/validation"},
		{"echo >| mappings.toml", "mappings.toml"},
		{"cmd >& mappings.toml", "mappings.toml"},
		{"exec 3<>mappings.toml", "mappings.toml"},
		{"cat <<EOF > mappings.toml\n[settings]\nEOF", "mappings.toml"},
		{`echo x > "mappings.toml"`, "mappings.toml"},
		{`echo x > 'mappings'.toml`, "mappings.toml"},
		{`echo x > mapp\ings.toml`, "mappings.toml"},
		{`echo x > ./tmp/../mappings.toml`, "mappings.toml"},
		{`echo x > ` + root + `/mappings.toml`, "mappings.toml"},
		{`echo x > "$CLAUDE_PROJECT_DIR/mappings.toml"`, "mappings.toml"},
		{`echo x > "${CLAUDE_PROJECT_DIR}"/tmp/validation/lock`, "tmp/validation"},
		{`echo x > $PWD/mappings.toml`, "mappings.toml"},
		{"echo ok; echo x > mappings.toml", "mappings.toml"},
		{"true && echo x > mappings.toml || false", "mappings.toml"},
		{"if true; then echo x > mappings.toml; fi", "mappings.toml"},
		{"(echo x > mappings.toml)", "mappings.toml"},
		{"{ echo x; } > mappings.toml", "mappings.toml"},
		{"echo x | tee -a tmp/validation/lock", "tmp/validation"},
		{"tee mappings.toml < /dev/null", "mappings.toml"},
		{"echo $(echo x > mappings.toml)", "mappings.toml"},
		{"echo `rm mappings.toml`", "mappings.toml"},
		{"diff <(cat a) >(tee mappings.toml)", "mappings.toml"},
		// Removing, moving, copying onto.
		{"rm mappings.toml", "mappings.toml"},
		{"rm -rf tmp/validation", "tmp/validation"},
		{"rm -rf tmp/validation/", "tmp/validation"},
		{"rm -rf tmp", "tmp/validation"},
		{"rm -rf tmp/*", "tmp/validation"},
		{"rm -rf tmp/valid*", "tmp/validation"},
		{"rm -rf tmp/validation/sessions/*/main", "tmp/validation"},
		{"rm -rf t{mp,est}", "tmp/validation"},
		{"rm -rf *", "mappings.toml"}, // the glob is expanded: mappings.toml comes first
		{"rm -rf .", "tmp/validation"},
		{"rm -r -- tmp", "tmp/validation"},
		{"rmdir tmp/validation", "tmp/validation"},
		{"unlink tmp/validation/lock", "tmp/validation"},
		{"sudo rm mappings.toml", "mappings.toml"},
		{"command rm -f mappings.toml", "mappings.toml"},
		{`\rm mappings.toml`, "mappings.toml"},
		{"/bin/rm mappings.toml", "mappings.toml"},
		{"env FOO=1 rm mappings.toml", "mappings.toml"},
		{"timeout 5 rm mappings.toml", "mappings.toml"},
		{"nice -n 5 nohup rm mappings.toml", "mappings.toml"},
		// A wrapper's long option takes its value: the word after it is not the command.
		{"timeout --kill-after 5 10 rm mappings.toml", "mappings.toml"},
		{"sudo --user root rm mappings.toml", "mappings.toml"},
		{"nice --adjustment 5 rm mappings.toml", "mappings.toml"},
		{"mv mappings.toml mappings.old", "mappings.toml"},
		{"mv /tmp/m.toml mappings.toml", "mappings.toml"},
		{"mv /tmp/mappings.toml .", "mappings.toml"},
		{"mv tmp /tmp/gone", "tmp/validation"},
		{"cp /tmp/m.toml mappings.toml", "mappings.toml"},
		{"cp -r /tmp/state tmp/validation", "tmp/validation"},
		{"cp -t validators evil.sh", "validators"},
		{"install -m 755 x.sh validators/validate-worktree.sh", "validators"},
		{"rsync -a /tmp/v/ validators/", "validators"},
		{"ln -sf /dev/null mappings.toml", "mappings.toml"},
		{"ln -s tmp/validation state", "tmp/validation"},
		// Editing in place and other writers.
		{"sed -i s/a/b/ mappings.toml", "mappings.toml"},
		{"sed -i.bak -e s/a/b/ mappings.toml", "mappings.toml"},
		{"sed -Ei 's/a/b/' mappings.toml", "mappings.toml"},
		{"sed --in-place 's/a/b/' mappings.toml", "mappings.toml"},
		{"perl -pi -e 's/a/b/' mappings.toml", "mappings.toml"},
		{"awk -i inplace '{print}' mappings.toml", "mappings.toml"},
		{`awk '{print > "mappings.toml"}' x`, "mappings.toml"},
		{"truncate -s 0 mappings.toml", "mappings.toml"},
		{"touch tmp/validation/sessions/x", "tmp/validation"},
		{"mkdir -p tmp/validation/sessions/fake/main", "tmp/validation"},
		{"chmod -x validators/validate-worktree.sh", "validators"},
		{"chmod 000 tmp", "tmp/validation"},
		{"chmod -R u-w .", "tmp/validation"},
		{"chown nobody mappings.toml", "mappings.toml"},
		{"dd if=/dev/zero of=mappings.toml", "mappings.toml"},
		{"sort -o mappings.toml mappings.toml", "mappings.toml"},
		// -o read word by word: a word ending in o before it is no option cluster taking -o's value.
		{"gcc -Io -o mappings.toml x.c", "mappings.toml"},
		{"go build -buildvcs=auto -o mappings.toml ./cmd/detect", "mappings.toml"},
		{"cc -DNAME=go -o mappings.toml x.c", "mappings.toml"},
		{"curl -o mappings.toml https://example.com/m.toml", "mappings.toml"},
		{"wget -O mappings.toml https://example.com/m.toml", "mappings.toml"},
		{"tar -xf x.tar -C tmp/validation", "tmp/validation"},
		{"tar cf mappings.toml src", "mappings.toml"},
		{"ed -s mappings.toml <<EOF\n,d\nw\nEOF", "mappings.toml"},
		{"patch mappings.toml fix.diff", "mappings.toml"},
		// The validators' programs.
		{"echo 'exit 0' > validators/validate-worktree.sh", "validators"},
		{"echo 'exit 0' > validators/lib.sh", "validators"},
		{"echo 'exit 0' > validators/new.sh", "validators"},
		{"echo 'exit 0' > scripts/check.sh", "scripts/check.sh"},
		{"echo '{}' > .claude/settings.json", ".claude/settings.json"},
		// git.
		{"git checkout -- mappings.toml", "mappings.toml"},
		{"git checkout HEAD~1 -- mappings.toml", "mappings.toml"},
		{"git checkout .", "tmp/validation"},
		{"git restore mappings.toml", "mappings.toml"},
		{"git restore --source=HEAD -- validators", "validators"},
		{"git -C validators checkout -- .", "validators"},
		{"git rm mappings.toml", "mappings.toml"},
		{"git clean -fdx", "tmp/validation"},
		{"git clean -f validators/", "validators"},
		// find and xargs.
		{"find . -delete", "tmp/validation"},
		{"find tmp -name '*.json' -delete", "tmp/validation"},
		{"find tmp -type f -exec rm {} +", "tmp/validation"},
		{`find . -name x -exec rm -f {} \;`, "tmp/validation"},
		{"find validators -name '*.sh' -exec sed -i s/1/0/ {} +", "validators"},
		{"find src -fprint mappings.toml", "mappings.toml"},
		{"ls tmp/validation/sessions | xargs rm -rf", "tmp/validation"},
		{"echo mappings.toml | xargs -I{} cp /dev/null {}", "mappings.toml"},
		{"xargs rm mappings.toml < list", "mappings.toml"},
		// The working directory, variables and loops.
		{"cd tmp && rm -rf validation", "tmp/validation"},
		{"cd tmp/validation; rm -rf *", "tmp/validation"},
		{"cd " + root + "/tmp\nrm -r validation", "tmp/validation"},
		{"cd src && echo x > ../mappings.toml", "mappings.toml"},
		{"cd $SOMEWHERE && rm -rf validation", "tmp/validation"},
		{"cd $SOMEWHERE && rm -rf build", ""},
		{"D=tmp/validation; rm -rf $D", "tmp/validation"},
		{`D=tmp; rm -rf "$D/validation"`, "tmp/validation"},
		{"export F=mappings.toml && : > $F", "mappings.toml"},
		{"for f in tmp/validation/*; do rm $f; done", "tmp/validation"},
		{"for f in a mappings.toml; do sed -i s/x/y/ $f; done", "mappings.toml"},
		{"rm -rf ~/x", ""},
		// The session's transcripts, which the gate reconciles with.
		{"sed -i /Read/d ~/.claude/projects/-p/s1.jsonl", "/home/agent/.claude/projects/-p/s1.jsonl"},
		{"rm -rf $HOME/.claude/projects/-p/s1/subagents", "/home/agent/.claude/projects/-p/s1"},
		{"cat ~/.claude/projects/-p/s1.jsonl", ""},
		{"rm ~/.claude/projects/-p/other.jsonl", ""},
		// Shells and interpreters.
		{"bash -c 'rm -rf tmp/validation'", "tmp/validation"},
		{`sh -c "echo x > mappings.toml"`, "mappings.toml"},
		{"sh -c 'cat mappings.toml'", ""},
		{"eval 'rm mappings.toml'", "mappings.toml"},
		{"bash <<EOF\nrm -rf tmp/validation\nEOF", "tmp/validation"},
		{"echo 'rm -rf tmp/validation' | sh", "tmp/validation"},
		{"echo 'rm -rf tmp/other' | bash", ""},
		{`python3 -c "open('mappings.toml', 'w').write('')"`, "mappings.toml"},
		{"python3 - <<'EOF'\nimport shutil; shutil.rmtree('tmp/validation')\nEOF", "tmp/validation"},
		{"python3 tools/fix.py mappings.toml", "mappings.toml"},
		{"python3 tools/fix.py output/joke.txt", ""},
		{`node -e "require('fs').unlinkSync('mappings.toml')"`, "mappings.toml"},
		{`ruby -e 'File.write("mappings.toml", "")'`, "mappings.toml"},
		{`perl -e 'unlink "mappings.toml"'`, "mappings.toml"},
		{"echo \"import os; os.remove('mappings.toml')\" | python3", "mappings.toml"},
		// Escapes in assignments, which the shell removes and the
		// interpreter kept (shell.quoteWordEscapes).
		{`f=mapping\s.toml; rm "$f"`, "mappings.toml"},
		{`f=mappings\.toml; rm "$f"`, "mappings.toml"},
		{`export f=tmp/valid\ation; rm -rf "$f"`, "tmp/validation"},
		{`g() { local f=mapping\s.toml; : > "$f"; }; g`, "mappings.toml"},
		{`f="mapping\s.toml"; rm "$f"`, ""}, // in double quotes, \s stays: another file
		{`echo x > mapp\ings.toml`, "mappings.toml"},
		{`echo x > "mapp\ings.toml"`, ""}, // in double quotes, \i stays: another file
		{`rm ${x:-mapping\s.toml}`, "mappings.toml"},
		{`: ${x:=mapping\s.toml}; rm $x`, "mappings.toml"},
		{`f=x; f=${f/x/mapping\s.toml}; rm "$f"`, "mappings.toml"},
		{`declare -A m=([k]=mapping\s.toml); rm "${m[k]}"`, "mappings.toml"},
		{`rm "${x:-mapping\s.toml}"`, ""},
		{`f=x; rm "${f/#x/mappings.toml}"`, "mappings.toml"},
		{`f=mappings.toml; rm "${f/%s/}"`, "mappings.toml"},
		{`f=x; rm "${f/x/mapping's'.toml}"`, "mappings.toml"}, // a quoted replacement is no heavier than its text
		// A nested shell inherits what its caller exports.
		{`export f=mappings.toml; sh -c 'rm "$f"'`, "mappings.toml"},
		{`f=tmp/validation bash -c 'rm -rf "$f"'`, "tmp/validation"},
		{`env f=mappings.toml sh -c ': > "$f"'`, "mappings.toml"},
		{`env -u g f=mappings.toml sh -c 'rm "$f"'`, "mappings.toml"},
		{`export f=mapping\s.toml; sh -c 'rm "$f"'`, "mappings.toml"},
		{`f=mappings.toml sh -c 'echo "$f"'`, ""},
		{`export f=/tmp/x; env -u f sh -c 'rm "${f:-mappings.toml}"'`, "mappings.toml"},
		{`export f=/tmp/x; env -i sh -c 'rm "${f:-mappings.toml}"'`, "mappings.toml"},
		{`env -C / f=mappings.toml sh -c 'cd "$CLAUDE_PROJECT_DIR" && rm "$f"'`, "mappings.toml"},
	}
}

func TestBash(t *testing.T) {
	root, set := project(t, nil)
	tests := append(existingCases(root), gateCases()...)
	for _, tt := range tests {
		h := set.CheckBash(tt.cmd, root)
		got := ""
		if h != nil {
			got = h.Protected.Show
		}
		if got != tt.want {
			t.Errorf("%q: hit %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

func TestBashCwd(t *testing.T) {
	root, set := project(t, nil)
	// The session's cwd is a subfolder: relative paths start there.
	if h := set.CheckBash("rm -rf validation", filepath.Join(root, "tmp")); h == nil {
		t.Errorf("rm -rf validation in tmp/: allowed")
	}
	if h := set.CheckBash("rm -rf validation", filepath.Join(root, "src")); h != nil {
		t.Errorf("rm -rf validation in src/: denied: %s", h.Reason())
	}
	if h := set.CheckBash("echo > ../mappings.toml", filepath.Join(root, "src")); h == nil {
		t.Errorf("echo > ../mappings.toml in src/: allowed")
	}
}

// A script the guard reads only in part (past its 1 MiB bound) cannot be
// judged by that part: padding before the write hid it.
func TestBashSourcesBigFile(t *testing.T) {
	root, set := project(t, nil)
	pad := strings.Repeat("# padding\n", shell.MaxRead/10+1000) + "rm mappings.toml\n"
	if err := os.WriteFile(filepath.Join(root, "src", "pad.sh"), []byte(pad), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"source src/pad.sh", ". src/pad.sh", "cd src && . ./pad.sh"} {
		if h := set.CheckBash(cmd, root); h == nil {
			t.Errorf("%q: allowed", cmd)
		}
	}
	if h := set.CheckBash("cat src/pad.sh | grep -c padding", root); h != nil {
		t.Errorf("reading it: denied: %s", h.Reason())
	}
}

// env's options in every spelling GNU env reads are options, never the
// program: the program after them, or the text -S splits, is judged.
func TestBashEnvOptions(t *testing.T) {
	root, set := project(t, nil)
	for _, cmd := range []string{
		"env --unset FOO rm -rf mappings.toml", "env --unset=FOO rm -rf mappings.toml",
		"env --chdir . rm -rf mappings.toml", "env -iu FOO rm -rf mappings.toml", "env -uFOO rm mappings.toml",
		"env -S 'rm -rf mappings.toml'", "env --split-string 'rm -rf' mappings.toml", "env -iS 'rm -f' mappings.toml",
		`env -S "rm 'mappings.toml'"`, "env -- rm mappings.toml",
	} {
		if h := set.CheckBash(cmd, root); h == nil {
			t.Errorf("%q: allowed", cmd)
		}
	}
	for _, cmd := range []string{"env --unset FOO ls", "env -S 'echo hi'", "env -i PATH=/bin cat mappings.toml"} {
		if h := set.CheckBash(cmd, root); h != nil {
			t.Errorf("%q: denied: %s", cmd, h.Reason())
		}
	}
}

func TestBashSymlink(t *testing.T) {
	root, set := project(t, nil)
	if err := os.Symlink(filepath.Join(root, "tmp/validation"), filepath.Join(root, "state")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "mappings.toml"), filepath.Join(root, "m.toml")); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"rm -rf state/sessions", "echo x > state/lock", "echo x > m.toml", "rm -rf state/*"} {
		if h := set.CheckBash(cmd, root); h == nil {
			t.Errorf("%q through a symlink: allowed", cmd)
		}
	}
}

func TestProtectSettings(t *testing.T) {
	root, off := project(t, []string{})
	if !off.Empty() {
		t.Fatalf("protect = []: %d paths protected, want none", len(off.Paths()))
	}
	if h := off.CheckBash("rm -rf tmp/validation", root); h != nil {
		t.Errorf("protect = []: denied %s", h.Reason())
	}
	_, custom := project(t, []string{"docs/policy.md", "scripts"})
	var shows []string
	for _, p := range custom.Paths() {
		shows = append(shows, p.Show)
	}
	want := "tmp/validation mappings.toml validators scripts/check.sh .claude/settings.json .claude/settings.local.json " +
		"/home/agent/.claude/projects/-p/s1.jsonl /home/agent/.claude/projects/-p/s1 docs/policy.md scripts"
	if got := strings.Join(shows, " "); got != want {
		t.Errorf("protected:\n got %s\nwant %s", got, want)
	}
}

func TestCheckPath(t *testing.T) {
	root, set := project(t, nil)
	if err := os.Symlink(filepath.Join(root, "tmp/validation"), filepath.Join(root, "state")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, cwd string
		denied    bool
	}{
		{root + "/mappings.toml", "", true},
		{root + "/src/../mappings.toml", "", true},
		{"mappings.toml", root, true},
		{"../mappings.toml", root + "/src", true},
		{root + "/tmp/validation/sessions/s/main/joke.json", "", true},
		{root + "/state/sessions/new.json", "", true}, // through a symlink into the state dir
		{root + "/validators/new-helper.sh", "", true},
		{root + "/scripts/check.sh", "", true},
		{root + "/scripts/other.sh", "", false},
		{root + "/src/prompts/joke.md", "", false},
		{root + "/output/joke.txt", "", false},
		{root + "/mappings.toml.orig", "", false},
		{root + "/tmp/validation-notes.md", "", false},
		{"", root, false},
	}
	for _, tt := range tests {
		cwd := tt.cwd
		if cwd == "" {
			cwd = root
		}
		if got := set.CheckPath(tt.path, cwd) != nil; got != tt.denied {
			t.Errorf("%s (cwd %s): denied %v, want %v", tt.path, cwd, got, tt.denied)
		}
	}
}

func TestReason(t *testing.T) {
	root, set := project(t, nil)
	h := set.Check("Bash", hook.ToolInput{Command: "rm -rf tmp"}, root)
	if h == nil {
		t.Fatal("rm -rf tmp: allowed")
	}
	want := "stopgate denied this Bash call: it would change tmp/validation (through tmp) with `rm -rf tmp`. tmp/validation is protected: it is stopgate's state dir, which holds the checks pending before you may stop, and the agent being checked must not change its own checks. Do not try another way to change it. If it really needs to change, ask the user to change it. Reading it is allowed (Read, cat, grep, gate status)."
	if got := h.Reason(); got != want {
		t.Errorf("reason:\n got %s\nwant %s", got, want)
	}
	if h := set.Check("Read", hook.ToolInput{FilePath: root + "/mappings.toml"}, root); h != nil {
		t.Errorf("Read: denied")
	}
	if h := set.Check("Edit", hook.ToolInput{FilePath: root + "/mappings.toml"}, root); h == nil || h.Tool != "Edit" {
		t.Errorf("Edit of mappings.toml: %+v", h)
	}
	if h := set.Check("NotebookEdit", hook.ToolInput{NotebookPath: root + "/tmp/validation/x.ipynb"}, root); h == nil {
		t.Errorf("NotebookEdit in the state dir: allowed")
	}
}

// testSet is the guard's set of src's project, as trust.Base.Guard makes
// it of the project's part.
func testSet(src Source) *Set { return New(path.Clean(slash(src.Root)), src.Home, Entries(src)) }

// TestOptionalValues: GNU getopt's optional values (xargs -l[N], -e[EOF];
// shred's -u takes none) and long options' values (--max-args N) do not
// swallow the command or the file operand.
func TestOptionalValues(t *testing.T) {
	root, set := project(t, nil)
	for _, cmd := range []string{
		"shred -u mappings.toml",
		"echo mappings.toml | xargs -l rm",
		"echo mappings.toml | xargs -e rm",
		"echo a | xargs --max-args 1 rm mappings.toml",
		"echo a | xargs --max-procs 2 rm mappings.toml",
		"echo a | xargs --delimiter x rm mappings.toml",
	} {
		if h := set.CheckBash(cmd, root); h == nil || h.Protected.Show != "mappings.toml" {
			t.Errorf("%q: hit %v, want mappings.toml", cmd, h)
		}
	}
}

// TestShellPlusOptions: a shell reads +o NAME like -o NAME and skips a lone
// +, and --rcfile takes a value, so -c after them still runs its text (the
// guard once took them for the script); GNU time -o writes its file.
func TestShellPlusOptions(t *testing.T) {
	root, set := project(t, nil)
	for _, cmd := range []string{`sh +o posix -c 'rm mappings.toml'`, `bash +O extglob -ec 'rm mappings.toml'`, `bash -c -e 'rm mappings.toml'`,
		`bash + -c 'rm mappings.toml'`, `dash + -c 'rm mappings.toml'`, `bash --rcfile x -c 'rm mappings.toml'`, `bash --init-file x -c 'rm mappings.toml'`,
		"/usr/bin/time -o mappings.toml true", "command time -a -o mappings.toml true", "env time --output=mappings.toml true", "time -f %e rm mappings.toml"} {
		if h := set.CheckBash(cmd, root); h == nil || h.Protected.Show != "mappings.toml" {
			t.Errorf("%q: hit %v, want mappings.toml", cmd, h)
		}
	}
}

// TestWrapperNamedValidator: a validator's program named like a wrapper
// (scripts/taskset) is protected like any other.
func TestWrapperNamedValidator(t *testing.T) {
	for run, prog := range map[string]string{"scripts/taskset": "scripts/taskset", "timeout 60 scripts/prlimit": "scripts/prlimit",
		"env CI=1 scripts/prlimit": "scripts/prlimit", "nice scripts/chrt --fast": "scripts/chrt"} {
		root, _ := project(t, nil)
		set := testSet(Source{Root: root, Home: "/home/agent", File: filepath.Join(root, "mappings.toml"),
			StateDir: filepath.Join(root, "tmp/validation"), Runs: []Run{{Name: "tests", Command: run}}})
		if h := set.CheckBash("printf 'exit 0\\n' > "+prog, root); h == nil || h.Protected.Show != prog {
			t.Errorf("run %q: rewriting the validator's program %s: hit %v", run, prog, h)
		}
	}
}

// TestTracers: strace, ltrace and perf run the command after their options
// and write the file -o names; the guard once judged only their -p.
func TestTracers(t *testing.T) {
	root, set := project(t, nil)
	for cmd, deny := range map[string]bool{
		`strace rm mappings.toml`: true, `strace -f -e trace=file rm mappings.toml`: true, `ltrace rm mappings.toml`: true,
		`perf record rm mappings.toml`: true, `perf stat -e cycles -- rm mappings.toml`: true,
		`strace -o mappings.toml true`: true, `strace -omappings.toml true`: true, `ltrace -o mappings.toml true`: true,
		`perf record -o mappings.toml true`: true, `perf record --output=mappings.toml true`: true,
		`strace -f -o out.txt ls`: false, `perf stat -o out.txt ls`: false, `ltrace ls`: false,
	} {
		if h := set.CheckBash(cmd, root); (h != nil) != deny {
			t.Errorf("%q: hit %v, want deny %v", cmd, h, deny)
		}
	}
}

// TestTimeKeyword: bash parses time as a keyword, and the dry run leaves its
// options as the program; sh (dash) runs GNU time, which runs the command after
// them and writes -o's file. The guard once let these through.
func TestTimeKeyword(t *testing.T) {
	root, set := project(t, nil)
	for _, cmd := range []string{`sh -c 'time -f %e rm mappings.toml'`, `dash -c 'time -o mappings.toml true'`,
		"true; time -f %e rm mappings.toml", "true; time -o mappings.toml true"} {
		if h := set.CheckBash(cmd, root); h == nil || h.Protected.Show != "mappings.toml" {
			t.Errorf("%q: hit %v, want mappings.toml", cmd, h)
		}
	}
	// A word of "-" alone is a program, not time's options: it once sent the guard round timeRule until the stack
	// overflowed, and the hook died instead of denying.
	for _, cmd := range []string{"- x; rm mappings.toml", "time - x; rm mappings.toml"} {
		if h := set.CheckBash(cmd, root); h == nil || h.Protected.Show != "mappings.toml" {
			t.Errorf("%q: hit %v, want mappings.toml", cmd, h)
		}
	}
	if h := set.CheckBash("true; time -p ls", root); h != nil {
		t.Errorf("time -p ls: denied: %s", h.Reason())
	}
}

// TestBashReassignedHome: a HOME or CLAUDE_PROJECT_DIR the command set
// itself is the one env passes on, in a statement no dry run reached (the
// test before && is unknown to the guard) and in a nested shell alike. The
// static pass once listed the fixed values last, over the agent's, and
// env sh -c 'rm "$HOME/mappings.toml"' removed the file unseen.
func TestBashReassignedHome(t *testing.T) {
	root, set := project(t, nil)
	unknown := `[ "$(date +%s)" -gt 0 ] && `
	for _, cmd := range []string{
		`HOME=$PWD; ` + unknown + `env sh -c 'rm -f "$HOME/mappings.toml"'`,
		`export HOME=$PWD; ` + unknown + `env -S 'rm -f ~/mappings.toml'`,
		`HOME=$PWD; ` + unknown + `env -u FOO sh -c 'rm -f "$HOME/mappings.toml"'`,
		`CLAUDE_PROJECT_DIR=$PWD/validators; ` + unknown + `env X=1 bash -c 'echo x > "$CLAUDE_PROJECT_DIR/x"'`,
		`CLAUDE_PROJECT_DIR=$PWD/.claude; if ` + unknown + `true; then env sh -c 'cp /etc/hosts "$CLAUDE_PROJECT_DIR/settings.json"'; fi`,
		`export HOME=$PWD; sh -c 'env sh -c "rm -f ~/mappings.toml"'`,
		`export HOME=$PWD; env sh -c 'rm -f "$HOME/mappings.toml"'`,
	} {
		if h := set.CheckBash(cmd, root); h == nil {
			t.Errorf("%q: allowed", cmd)
		}
	}
	for _, cmd := range []string{
		`export CLAUDE_PROJECT_DIR=/tmp; ` + unknown + `env sh -c 'rm -f "$CLAUDE_PROJECT_DIR"/mappings.toml'`,
		`export HOME=/tmp; env sh -c 'rm -f "$HOME/mappings.toml"'`,
	} {
		if h := set.CheckBash(cmd, root); h != nil {
			t.Errorf("%q: denied: %s", cmd, h.Reason())
		}
	}
}
