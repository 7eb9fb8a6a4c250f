package config

import (
	"testing"
)

// TestTablesScanLocatesAsEveryKey: a config without Problems is located by
// the scan of its tables alone, which must find each mapping and validator
// where the scan of every key does, in every layout TOML allows them.
func TestTablesScanLocatesAsEveryKey(t *testing.T) {
	for name, text := range map[string]string{
		"tables": catalogueBase,
		"dotted validator keys": "validators.a.file = \"x\"\n[[mapping]]\nprompt = \"p\"\nvalidators = [\"a\", \"b\"]\n" +
			"[validators]\nb.run = \"true\"\n",
		"inline validators": "[validators]\na = { file = \"x\" }\nb = { run = \"true\" }\n" +
			"[[mapping]]\nprompt = \"p\"\nvalidators = [\"a\", \"b\"]\n",
		"inline mappings": "mapping = [\n  { prompt = \"p\", validators = [\"a\"] },\n  { prompt = \"q\", validators = [\"a\"] },\n]\n" +
			"[validators.a]\nfile = \"x\"\n",
		"quoted names": "[[mapping]]\nprompt = \"p\"\nvalidators = [\"my v\"]\n" +
			"[validators.\"my v\"]\nfile = \"x\"\n",
		"multi-line strings": "[validators.a]\nfile = \"x\"\nfix = \"\"\"\n[validators.b]\n[[mapping]]\n\"\"\"\n" +
			"[[mapping]]\nprompt = \"p\"\nvalidators = [\"a\"]\n",
	} {
		t.Run(name, func(t *testing.T) {
			cfg, p := parse([]byte(text), "/p/mappings.toml", "/p")
			if cfg == nil || len(p.problems) > 0 {
				t.Fatalf("parse: %v", p.problems)
			}
			p.locate(cfg)
			if p.pos.keys != nil {
				t.Error("a config without Problems was scanned for every key")
			}
			every := scanLines(text, func(string) bool { return true })
			for i, m := range cfg.Mappings {
				if want := every.line(mappingPath(i)); m.Line != want || want == 0 {
					t.Errorf("mapping %d at line %d, want %d", i, m.Line, want)
				}
			}
			for _, v := range cfg.Validators {
				if want := every.line("validators." + v.Name); v.Line != want || want == 0 {
					t.Errorf("validator %q at line %d, want %d", v.Name, v.Line, want)
				}
			}
		})
	}
}
