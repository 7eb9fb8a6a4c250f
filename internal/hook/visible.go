package hook

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible returns s with every control character but newline and tab, and
// every byte that is not UTF-8, spelled out (\x1b, \u009b, \xff): text a
// validator printed reaches the client's terminal and the model through
// reason and stopReason, and an escape sequence there could rewrite what
// the user sees. Text without such characters is returned as it is.
func Visible(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 {
			return true
		}
	}
	return false
}
