package settings

// Doc is one settings file parsed once, for every question asked of it.
type Doc struct {
	text []byte
	root *node
	err  error // the text is not JSON
}

// Parse parses data, empty as {}; text that is not JSON is each question's error.
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
// but false, which the client may read otherwise.
func (d *Doc) DisablesHooks() bool {
	v := d.root.get("disableAllHooks")
	return v != nil && (v.kind != 'v' || v.str != "false")
}

// Env returns the names the file's env object sets (for every hook), in
// text order.
func (d *Doc) Env() []string { return keys(d.root.get("env")) }

// HookEnv returns the names each hook command's own env sets
// (hooks.EVENT[].hooks[].env, Gemini CLI's and Qwen Code's), in text order.
func (d *Doc) HookEnv() []string {
	var names []string
	for _, ev := range d.root.get("hooks").list() {
		for _, group := range ev.val.elems {
			for _, h := range group.get("hooks").elements() {
				names = append(names, keys(h.get("env"))...)
			}
		}
	}
	return names
}

// keys returns the keys of object n, none when n is nil or not one.
func keys(n *node) []string {
	var names []string
	for _, m := range n.list() {
		names = append(names, m.key)
	}
	return names
}
