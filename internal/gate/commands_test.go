package gate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.Local)
	for _, tt := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "", want: time.Time{}},
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "24h", want: now.Add(-24 * time.Hour)},
		{in: "7d", want: now.AddDate(0, 0, -7)},
		{in: "2w", want: now.AddDate(0, 0, -14)},
		{in: "2025-03-01", want: time.Date(2025, 3, 1, 0, 0, 0, 0, time.Local)},
		{in: "2025-03-01 08:30", want: time.Date(2025, 3, 1, 8, 30, 0, 0, time.Local)},
		{in: "2025-03-01T08:30:00Z", want: time.Date(2025, 3, 1, 8, 30, 0, 0, time.UTC)},
		{in: "yesterday", bad: true},
		{in: "-5m", bad: true},
		{in: "d", bad: true},
	} {
		got, err := parseSince(tt.in, now)
		if tt.bad != (err != nil) || !got.Equal(tt.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

func TestHumanDurations(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 59 * time.Second: "59s", 61 * time.Second: "1m", 59 * time.Minute: "59m",
		3 * time.Hour: "3h", 47 * time.Hour: "47h", 50 * time.Hour: "2d",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestBinPrefix(t *testing.T) {
	for _, tt := range []struct{ bin, prefix, dir, word string }{
		{"bin", `"$CLAUDE_PROJECT_DIR"/bin`, "/p/bin", "$CLAUDE_PROJECT_DIR/bin/gate"},
		{"./tools/bin/", `"$CLAUDE_PROJECT_DIR"/tools/bin`, "/p/tools/bin", "$CLAUDE_PROJECT_DIR/tools/bin/gate"},
		{".", `"$CLAUDE_PROJECT_DIR"`, "/p", "$CLAUDE_PROJECT_DIR/gate"},
		{"my tools", `"$CLAUDE_PROJECT_DIR"/'my tools'`, "/p/my tools", "$CLAUDE_PROJECT_DIR/my tools/gate"},
		{"/opt/stopgate/bin", "/opt/stopgate/bin", "/opt/stopgate/bin", "/opt/stopgate/bin/gate"},
		{"/home/o'neil/bin", `'/home/o'\''neil/bin'`, "/home/o'neil/bin", "/home/o'neil/bin/gate"},
	} {
		in := binInstall("/p", tt.bin)
		prefix, dir := in.dir, in.path
		if prefix != tt.prefix || dir != tt.dir {
			t.Errorf("binInstall(%q) = %q, %q; want %q, %q", tt.bin, prefix, dir, tt.prefix, tt.dir)
		}
		// However it is quoted, the shell runs the program at the path.
		if got := settings.FirstWord(prefix + "/gate"); got != tt.word {
			t.Errorf("the command %q runs %q, want %q", prefix+"/gate", got, tt.word)
		}
	}
}

// The registration table registers only programs built with the gate and
// only for events they handle.
func TestWanted(t *testing.T) {
	defer func(r []client.Hook) { client.Claude.Hooks = r }(client.Claude.Hooks)
	client.Claude.Hooks = append(slices.Clone(client.Claude.Hooks),
		client.Hook{Event: hook.Stop, Program: "not-built", Timeout: 10},                   // no cmd/not-built
		client.Hook{Event: hook.PreToolUse, Matcher: "Read", Program: "gate", Timeout: 10}, // the gate does not handle PreToolUse
		client.Hook{Event: "Notification", Program: "detect", Timeout: 10},                 // nor does detect handle Notification
	)
	var got []string
	for _, h := range hooksOf(client.Claude, install{dir: "B"}, "", true) {
		got = append(got, strings.TrimSpace(h.String()+" "+strings.Join(settings.Paths(h.Command), " ")+" "+settings.Args(h.Command)))
	}
	for _, want := range []string{"PostToolUse (Read|Skill|Bash) → detect B/detect", "Stop → gate B/gate --timeout 600", "SubagentStop → gate B/gate --timeout 600"} {
		if !slices.Contains(got, want) {
			t.Errorf("wanted() lacks %q: %q", want, got)
		}
	}
	for _, h := range got {
		for _, bad := range []string{"not-built", "PreToolUse (Read) → gate", "Notification"} {
			if strings.Contains(h, bad) {
				t.Errorf("wanted() has %q", h)
			}
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"joke", "joke", 0}, {"joke", "jokes", 1}, {"jok", "joke", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}} {
		if got := distance(tt.a, tt.b); got != tt.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}
