package settings

import "testing"

func TestEditAction(t *testing.T) {
	for _, tc := range []struct {
		file, path, want string
	}{
		{`{}`, "mappings.toml", ""},
		{`{"permission": "allow"}`, "mappings.toml", "allow"},
		{`{"permission": {"edit": "ask"}}`, "mappings.toml", "ask"},
		{`{"permission": {"edit": {"mappings.toml": "deny"}}}`, "mappings.toml", "deny"},
		{`{"permission": {"edit": {"mappings.toml": "deny"}}}`, "sub/mappings.toml", ""},
		{`{"permission": {"edit": {"mappings.toml": "deny", "*": "allow"}}}`, "mappings.toml", "allow"},
		{`{"permission": {"edit": {"*": "allow", "mappings.toml": "deny"}}}`, "mappings.toml", "deny"},
		// A key written twice keeps its first place, as in JavaScript.
		{`{"permission": {"edit": {"mappings.toml": "deny", "*": "allow", "mappings.toml": "deny"}}}`, "mappings.toml", "allow"},
		{`{"permission": {"edit": {"tmp/validation/*": "deny"}}}`, "tmp/validation/a/b", "deny"},
		{`{"permission": {"edit": {"a?c.toml": "deny"}}}`, "abc.toml", "deny"},
		{`{"permission": {"edit": {"a.toml": "deny"}}}`, "abtoml", ""},
	} {
		got, err := EditAction([]byte(tc.file), tc.path)
		if err != nil || got != tc.want {
			t.Errorf("EditAction(%s, %q) = %q, %v; want %q", tc.file, tc.path, got, err, tc.want)
		}
	}
}
