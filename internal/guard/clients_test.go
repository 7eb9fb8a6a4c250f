package guard

import (
	"reflect"
	"testing"
)

// TestCommandPrograms: the programs a hook command runs, as the clients
// resolve them, when it runs one of stopgate's.
func TestCommandPrograms(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{`"$CLAUDE_PROJECT_DIR"/bin/detect`, []string{"/p/bin/detect"}},
		{`"$GEMINI_PROJECT_DIR"/bin/gate --client gemini`, []string{"/p/bin/gate"}},
		{`$COPILOT_PROJECT_DIR/bin/testhook --client copilot --event agentStop`, []string{"/p/bin/testhook"}},
		{`/home/u/go/bin/gate --client codex`, []string{"/home/u/go/bin/gate"}},
		{`'/opt/stop gate/bin/detect'`, []string{"/opt/stop gate/bin/detect"}},
		{`~/go/bin/detect`, []string{"/home/u/go/bin/detect"}},
		{`$HOME/go/bin/detect`, []string{"/home/u/go/bin/detect"}},
		{`bin/gate`, []string{"/p/bin/gate"}},
		{`gate --client codex`, []string{""}},
		{`"${CLAUDE_PLUGIN_ROOT}"/bin/gate`, []string{""}},
		{`/usr/local/bin/launch "$CLAUDE_PROJECT_DIR"/bin/gate`, []string{"/usr/local/bin/launch", "/p/bin/gate"}},
		{`for p in "$CLAUDE_PROJECT_DIR"/bin/gate /home/u/go/bin/gate; do [ -x "$p" ] && [ -s "$p" ] || continue; "$p" --timeout 600; s=$?; [ $s -lt 126 ] && exit $s; [ $s -gt 127 ] && break; done; printf '%s\n' '{"continue":false}'`,
			[]string{"/p/bin/gate", "/home/u/go/bin/gate"}},
		// The launcher of an event with no fallback: it execs.
		{`for p in "$CLAUDE_PROJECT_DIR"/bin/detect; do [ -x "$p" ] && [ -s "$p" ] || continue; ${BASH_VERSION+shopt -s execfail}; trap 'exit 0' EXIT; exec "$p" --client codex; done; exit 0`,
			[]string{"/p/bin/detect"}},
		// An earlier gate init's launcher, still in users' settings files.
		{`for p in "$CLAUDE_PROJECT_DIR"/bin/gate /home/u/go/bin/gate; do [ -x "$p" ] && exec "$p" --timeout 600; done; printf '%s\n' '{"continue":false}'`,
			[]string{"/p/bin/gate", "/home/u/go/bin/gate"}},
		{`npx prettier --write .`, nil},
		{`echo 'not (closed`, nil},
	} {
		if got := commandPrograms(tc.cmd, "/p", "/home/u"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("commandPrograms(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}
