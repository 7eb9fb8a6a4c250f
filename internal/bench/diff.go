package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteDiffProject writes a project with n mappings whose middle one (the
// one Matched reads) also arms diff checks: a changelog that must change
// and no skip added to a test file. The tree holds files test files of
// about 3 KiB in files/10 directories, beside as many other Go files, so
// that arming it records real files.
func WriteDiffProject(dir string, n, files int) (*Project, error) {
	p, err := WriteProject(dir, n)
	if err != nil {
		return nil, err
	}
	mid := fmt.Sprintf("validators = [\"v%05d\"]\n", n/2)
	text := strings.Replace(Mappings(n), "prompt = \""+Key(n/2)+"\"\n"+mid,
		"prompt = \""+Key(n/2)+"\"\nvalidators = [\"v"+fmt.Sprintf("%05d", n/2)+"\", \"diff\"]\n", 1)
	text += "[validators.diff]\nchanged = [\"CHANGELOG.md\"]\nadded_lacks = 't\\.Skip\\('\nin = [\"**/*_test.go\"]\n"
	if err := writeFile(filepath.Join(dir, "mappings.toml"), text); err != nil {
		return nil, err
	}
	body := "package pkg\n\nimport \"testing\"\n\n" + strings.Repeat("func TestX(t *testing.T) {\n\tif 1+1 != 2 {\n\t\tt.Fatal(\"math\")\n\t}\n}\n\n", 50)
	for i := range files {
		d := filepath.Join(dir, "internal", fmt.Sprintf("pkg%03d", i%max(files/10, 1)))
		if err := writeFile(filepath.Join(d, fmt.Sprintf("f%04d_test.go", i)), body); err != nil {
			return nil, err
		}
		if err := writeFile(filepath.Join(d, fmt.Sprintf("f%04d.go", i)), body); err != nil {
			return nil, err
		}
	}
	return p, os.WriteFile(filepath.Join(dir, "CHANGELOG.md"), []byte("# Changelog\n"), 0o644)
}
