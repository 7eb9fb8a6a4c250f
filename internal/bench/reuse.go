package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// WriteTree writes a work tree of n files of about 512 bytes, a hundred to
// a folder, and, when git is set, makes it a git work tree with every file
// in the index: the tree the fingerprint rows hash.
func WriteTree(dir string, n int, git bool) error {
	line := strings.Repeat("x", 60) + "\n"
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.txt", i))
		if err := writeFile(path, fmt.Sprintf("file %d\n%s", i, strings.Repeat(line, 8))); err != nil {
			return err
		}
	}
	if !git {
		return nil
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", args[0], err, out)
		}
	}
	return nil
}

// WriteReuseProject writes a project whose one mapping, "work", has four
// run validators that each run spin (a CPU-bound program) and fail while
// part-N/broken exists, each with inputs = ["/part-N/"]: the agent fixes
// one of them and stops again. reuse is the [settings] reuse value.
func WriteReuseProject(dir, spin string, reuse bool) (*Project, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "[settings]\nreuse = %t\nconfine = false\n\n", reuse)
	b.WriteString("[[mapping]]\nprompt = \"work\"\nvalidators = [\"cpu1\", \"cpu2\", \"cpu3\", \"cpu4\"]\n\n")
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&b, "[validators.cpu%d]\nrun = \"%s && test ! -e part-%d/broken\"\ninputs = [\"/part-%d/\"]\n\n", i, spin, i, i)
		if err := writeFile(filepath.Join(dir, fmt.Sprintf("part-%d", i), "code.txt"), "code\n"); err != nil {
			return nil, err
		}
	}
	return WriteWorkProject(dir, b.String())
}

// Break makes validator cpu1 of a reuse project fail, or passes it again.
func (p *Project) Break(broken bool) error {
	path := filepath.Join(p.Dir, "part-1", "broken")
	if broken {
		return writeFile(path, "broken\n")
	}
	return os.Remove(path)
}
