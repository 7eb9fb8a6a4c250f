package dialect

import "strings"

// patchHeaders are the lines of an apply_patch envelope that name a file
// it adds, changes, deletes or moves to.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// PatchFiles returns the files an apply_patch envelope (Codex's and
// Copilot's edit tool) writes, as the patch names them.
func PatchFiles(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range patchHeaders {
			if f, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(f) != "" {
				out = append(out, strings.TrimSpace(f))
			}
		}
	}
	return out
}
