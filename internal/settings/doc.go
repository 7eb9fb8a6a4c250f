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
func (d *Doc) Env() []string { return keys(d.root.get("env")) }

// HookEnv returns the names each hook command's own env sets
// (hooks.EVENT[].hooks[].env, Gemini CLI's and Qwen Code's shape), in text
// order: the client sets them over its own for that hook.
func (d *Doc) HookEnv() []string {
	var names []string
	events := d.root.get("hooks")
	if events == nil {
		return nil
	}
	for _, ev := range events.members {
		for _, group := range ev.val.elems {
			if hooks := group.get("hooks"); hooks != nil {
				for _, h := range hooks.elems {
					names = append(names, keys(h.get("env"))...)
				}
			}
		}
	}
	return names
}

// keys returns the keys of object n, none when n is nil or not one.
func keys(n *node) []string {
	if n == nil {
		return nil
	}
	names := make([]string, len(n.members))
	for i, m := range n.members {
		names[i] = m.key
	}
	return names
}
