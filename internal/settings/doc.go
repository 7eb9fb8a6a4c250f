package settings

// Doc is one settings file parsed once, for every question an event asks
// of it: the hooks it registers, its wall, whether it switches hooks off.
type Doc struct {
	text []byte
	root *node
	err  error // the text is not JSON
}

// Parse parses data, empty as {}. A text that is not JSON is each
// question's error.
func Parse(data []byte) *Doc {
	d := &Doc{text: normalize(data)}
	d.root, d.err = parse(d.text)
	return d
}

// JSON reports whether the text is JSON, whatever its shape.
func (d *Doc) JSON() bool { return d.err == nil }

// Lookup reports, for each wanted hook, whether the file registers it.
func (d *Doc) Lookup(want []Hook) ([]Found, error) {
	if d.err != nil {
		return nil, d.err
	}
	out := make([]Found, len(want))
	for i, h := range want {
		var err error
		if out[i], err = lookup(d.text, d.root, h); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DisablesHooks reports whether the file sets disableAllHooks to anything
// but false: a value the client may read otherwise is not taken for false.
// A file that is not a JSON object sets nothing.
func (d *Doc) DisablesHooks() bool {
	v := d.root.get("disableAllHooks")
	return v != nil && (v.kind != 'v' || v.str != "false")
}

// Env returns the names the file's env object sets, in text order: the
// client hands each to every hook it runs. A file that is not a JSON
// object sets none.
func (d *Doc) Env() []string {
	v := d.root.get("env")
	if v == nil {
		return nil
	}
	names := make([]string, len(v.members))
	for i, m := range v.members {
		names[i] = m.key
	}
	return names
}
