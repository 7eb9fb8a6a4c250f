package settings

import "slices"

// Walled reports whether the client's OS sandbox walls off what the deny
// rule rule names from the agent's writes, as the settings files say:
// files are their texts in the order the client reads them (the user's,
// the project's, then the local ones: a later file's key wins, the deny
// rules add up). The wall's keys must count as the wall wants them, no
// command may run outside the sandbox, and some file must hold rule. why
// says what is missing when it is not.
func Walled(files [][]byte, rule string) (walled bool, why string) {
	value := map[string]bool{}
	var deny, excluded []string
	read := 0
	for _, data := range files {
		if data == nil {
			continue
		}
		st, err := InspectWall(data)
		if err != nil {
			return false, "a settings file does not parse: " + err.Error()
		}
		read++
		for k, v := range st.Set {
			value[k] = v
		}
		deny = append(deny, st.Deny...)
		excluded = append(excluded, st.Excluded...)
	}
	if read == 0 {
		return false, "no Claude Code settings"
	}
	for _, k := range wallKeys {
		if v, ok := value[k.key]; !ok || v != k.want {
			return false, "sandbox." + k.key + " is not " + map[bool]string{true: "true", false: "false"}[k.want]
		}
	}
	if len(excluded) > 0 {
		return false, "sandbox.excludedCommands run outside the sandbox"
	}
	if !slices.Contains(deny, rule) {
		return false, "permissions.deny lacks " + rule
	}
	return true, ""
}
