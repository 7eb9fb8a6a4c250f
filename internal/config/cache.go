package config

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/buildinfo"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/regular"
)

const (
	CacheDir  = "cache"     // where, under the state dir, Load keeps parsed configs
	staleTemp = time.Minute // the age of a cache temp file left by a killed writer
)

// Load is Parse of the config file, or its cache of the exact text (docs/config.md#the-cache).
func Load(file, root string) (*Config, error) {
	f, err := openText(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The default state dir's cache counts for a text that names none.
	ctx := contextKey()
	hit, mentions := readCache(cachePath(stateDir(root, ""), file), f, ctx)
	if hit == nil || mentions {
		if hit != nil {
			hit.cached.f.Close() // the default dir's cache may not be the text's
		}
		var text []byte // what a miss parses: the file opened, from its start
		if _, err = f.Seek(0, io.SeekStart); err == nil {
			text, err = io.ReadAll(f)
		}
		if err != nil {
			return nil, err
		}
		hit = nil
		if dir, known := textStateDir(text, root); known {
			hit, _ = readCache(cachePath(dir, file), bytes.NewReader(text), ctx)
		}
		if hit == nil {
			cfg, err := Parse(text, file, root)
			if err == nil {
				writeCache(cachePath(cfg.StateDir(), file), encodeCache(cfg, text, ctx))
			}
			return cfg, err
		}
	}
	hit.File, hit.Root = file, root
	return hit, nil
}

// A cache file is its head line, the text, then the sorted record lines:
// kind letter, JSON key, tab, JSON value. Each line is sealed: a tab and
// the hex checksum of what precedes it end it.
type cacheHead struct {
	Context       string // see contextKey
	Key           [sha256.Size]byte
	Text, Records int64 // their lengths: a torn file is short
	Settings      Settings
	Telemetry     Telemetry
}

// cached is the cache file the load compared, held open: a rewrite leaves it.
type cached struct {
	f             *os.File
	text, at, end int64 // where the text, and the records, start; the end
}

// encodeCache is the cache of cfg: the mappings each path and command
// arms, each validator, and ('r') the run validators' names and commands.
func encodeCache(cfg *Config, text []byte, ctx string) []byte {
	var lines []string
	add := func(kind byte, key string, v any) {
		k, err1 := json.Marshal(key)
		b, err2 := json.Marshal(v)
		if err1 == nil && err2 == nil {
			lines = append(lines, seal(string(kind)+string(k)+"\t"+string(b)))
		}
	}
	tables := cfg.tables()
	for k, idx := range tables {
		maps := make([]Mapping, len(idx))
		for j, i := range idx {
			maps[j] = cfg.Mappings[i]
		}
		add(k[0], k[1:], maps)
	}
	var runs [][2]string
	for _, name := range cfg.Order {
		v := cfg.Validators[name]
		add('v', name, v)
		if v.Run != "" {
			runs = append(runs, [2]string{name, v.Run})
		}
	}
	add('r', "", runs)
	slices.Sort(lines)
	recs := strings.Join(lines, "")
	h := cacheHead{Context: ctx, Key: cfg.key, Text: int64(len(text)), Records: int64(len(recs)), Settings: cfg.Settings, Telemetry: cfg.Telemetry}
	head, err := json.Marshal(h)
	if err != nil || len(lines) != len(tables)+len(cfg.Order)+1 {
		return nil
	}
	return append(append([]byte(seal(string(head))), text...), recs...)
}

func seal(line string) string { return fmt.Sprintf("%s\t%08x\n", line, checksum([]byte(line))) }

// unseal returns a sealed line without its checksum, or errCache.
func unseal(line []byte) ([]byte, error) {
	i := bytes.LastIndexByte(line, '\t')
	if i < 0 || fmt.Sprintf("%08x", checksum(line[:i])) != string(line[i+1:]) {
		return nil, errCache
	}
	return line[:i], nil
}

// readCache returns the config cached at path for r's text and ctx, or nil; and whether r mentions a state dir.
func readCache(path string, r io.Reader, ctx string) (*Config, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	line, err := bufio.NewReader(f).ReadBytes('\n')
	var h cacheHead
	if err == nil {
		var head []byte
		if head, err = unseal(line[:len(line)-1]); err == nil && (json.Unmarshal(head, &h) != nil || h.Context != ctx) {
			err = errCache
		}
	}
	at := int64(len(line))
	if err == nil {
		if same, mentions := sameText(r, io.NewSectionReader(f, at, h.Text), h.Text); same {
			return &Config{Settings: h.Settings, Telemetry: h.Telemetry, key: h.Key, cached: &cached{f: f, text: at, at: at + h.Text, end: at + h.Text + h.Records}}, mentions
		}
	}
	f.Close()
	return nil, false
}

// sameText reports whether a and b, of size bytes, read the same bytes to
// their ends, and whether they mention a state dir, across reads too.
func sameText(a, b io.Reader, size int64) (same, mentions bool) {
	chunk := int(min(size+1, 32<<10)) // a short text in one read; a longer a fails at once
	buf := make([]byte, 64+2*chunk)   // x after an 8-byte tail of the last read, aligned
	x, y := buf[64:64+chunk], buf[64+chunk:]
	for {
		n, errA := io.ReadFull(a, x)
		m, errB := io.ReadFull(b, y)
		if n != m || errA != errB || !bytes.Equal(x[:n], y[:m]) {
			return false, false
		}
		mentions = mentions || mentionsStateDir(buf[56:64+n])
		copy(buf[56:64], buf[56+n:64+n])
		if errA != nil {
			return errA == io.EOF || errA == io.ErrUnexpectedEOF, mentions
		}
	}
}

// errCache is a cache file damaged or rewritten since the load.
var errCache = errors.New("config cache changed or damaged")

// fromCache decodes into v the record of kind and key (none: a zero v), else parses the file into c.
func (c *Config) fromCache(kind byte, key string, must bool, v any) (bool, error) {
	if c.cached == nil {
		return false, nil
	}
	if found, err := c.cached.get(kind, key, v); err == nil && (found || !must) {
		return true, nil
	}
	return false, c.reparse(nil)
}

// reparse makes c the parse of text, or of the file as it is now.
func (c *Config) reparse(text []byte) (err error) {
	if text == nil {
		if text, err = readText(c.File); err != nil {
			return err
		}
	}
	parsed, err := Parse(text, c.File, c.Root)
	if err == nil {
		*c = *parsed
	}
	return err
}

// get decodes into v the record of kind and key, found by binary search.
func (cc *cached) get(kind byte, key string, v any) (bool, error) {
	f := cc.f
	k, err := json.Marshal(key)
	if err != nil {
		return false, err
	}
	prefix := append(append([]byte{kind}, k...), '\t')
	lo, hi := cc.at, cc.end // lo is always at the start of a line
	for lo < hi {
		s := lo + (hi-lo)/2 // the first line that starts at or after the middle
		if s > lo {
			before, err := lineAt(f, s-1, hi)
			if err != nil {
				return false, err
			}
			s += int64(len(before))
		}
		if s >= hi {
			s = lo
		}
		line, err := lineAt(f, s, hi)
		if err != nil {
			return false, err
		}
		rec, err := unseal(line) // each line passed: a damaged key would hide a record
		if err != nil {
			return false, err
		}
		switch cmp := bytes.Compare(rec[:min(len(rec), len(prefix))], prefix); {
		case cmp == 0:
			if json.Unmarshal(rec[len(prefix):], v) != nil {
				return false, errCache
			}
			return true, nil
		case cmp < 0:
			lo = s + int64(len(line)) + 1
		default:
			hi = s
		}
	}
	return false, nil
}

// lineAt returns the line at off, before hi, without its newline.
func lineAt(f io.ReaderAt, off, hi int64) ([]byte, error) {
	line, err := bufio.NewReaderSize(io.NewSectionReader(f, off, hi-off), 512).ReadBytes('\n')
	if err != nil {
		return nil, errCache // unreadable, or no newline: torn
	}
	return line[:len(line)-1], nil
}

// Full returns the config with every mapping and validator, parsing the text the load compared.
func (c *Config) Full() (*Config, error) {
	if c.cached == nil {
		return c, nil
	}
	text := make([]byte, c.cached.at-c.cached.text)
	if _, err := c.cached.f.ReadAt(text, c.cached.text); err != nil || sha256.Sum256(text) != c.key {
		text = nil // the cache is gone: the file as it is now
	}
	return c, c.reparse(text)
}

// checksum finds a torn or damaged cache; the guard keeps out a forged one.
func checksum(b []byte) uint32 {
	h := fnv.New32a()
	h.Write(b)
	return h.Sum32()
}

// contextKey is what besides the text decides a parse.
func contextKey() string {
	return "stopgate " + buildinfo.Read().String() + ", block cap " + strconv.Itoa(BlockCap(os.Getenv))
}

// cachePath names the cache of config file under stateDir, one per file.
func cachePath(stateDir, file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	h := fnv.New64a()
	h.Write([]byte(abs))
	return filepath.Join(stateDir, CacheDir, "mappings-"+hex.EncodeToString(h.Sum(nil))+".idx")
}

// writeCache writes data to path atomically, best effort and unsynced.
func writeCache(path string, data []byte) {
	dir := filepath.Dir(path)
	if data == nil || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	queue.Sweep(dir, queue.Leftover{Prefix: queue.TempPrefix, Age: staleTemp})
	atomicfile.Write(path, data, atomicfile.Options{TempPrefix: queue.TempPrefix, NoSync: true})
}

// openText opens the config file: a named pipe planted there cannot hold the hook.
func openText(file string) (*os.File, error) {
	f, _, err := regular.Open(file)
	if errors.Is(err, regular.ErrNotRegular) {
		err = fmt.Errorf("%s is not a regular file", file)
	}
	return f, err
}

func readText(file string) ([]byte, error) {
	f, err := openText(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Path returns the config file: override (relative to dir), else root's.
func Path(root, override, dir string) string {
	switch {
	case override == "":
		return filepath.Join(root, project.ConfigName)
	case filepath.IsAbs(override):
		return override
	}
	return filepath.Join(dir, override)
}

// Missing reports whether err is the default config's absence (no override): no project.
func Missing(override string, err error) bool {
	return override == "" && errors.Is(err, fs.ErrNotExist)
}

// StateDir returns the absolute state dir.
func (c *Config) StateDir() string { return stateDir(c.Root, c.Settings.StateDir) }

// stateDir is the absolute state dir of the setting state_dir.
func stateDir(root, setting string) string {
	switch {
	case setting == "":
		setting = DefaultStateDir
	case filepath.IsAbs(setting):
		return filepath.Clean(setting)
	}
	return filepath.Join(root, setting)
}

// ReadStateDir returns the state dir the config names, or an error and a guess.
func ReadStateDir(file, root string) (string, error) {
	text, err := readText(file)
	if err != nil {
		return stateDir(root, ""), err
	}
	cfg, p := parse(text, file, root)
	if cfg != nil {
		return cfg.StateDir(), nil // its mistakes are not in the TOML
	}
	setting, _ := plainStateDir(text)
	return stateDir(root, setting), fmt.Errorf("%w (the state dir cannot be read)", p.problems[0])
}

// textStateDir returns the state dir config text names; false if undecodable.
func textStateDir(text []byte, root string) (dir string, known bool) {
	if setting, sure := plainStateDir(text); sure {
		return stateDir(root, setting), true
	}
	var raw rawFile // a text that does not decode into it does not parse either
	if _, err := toml.Decode(string(text), &raw); err != nil {
		return "", false
	}
	return stateDir(root, raw.Settings.StateDir), true
}

// plainStateDir reads state_dir without decoding: sure when nothing can
// spell the key, or a plain `state_dir = "dir"` line stands under
// [settings] with no multi-line string before it.
func plainStateDir(data []byte) (setting string, sure bool) {
	if !mentionsStateDir(data) {
		return "", true
	}
	table, multi := "", false // the header in force; a multi-line string before
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			table = cutComment(line)
		} else if key, rest, ok := strings.Cut(line, "="); ok && strings.TrimSpace(key) == "state_dir" && table == "[settings]" {
			if v, ok := plainString(rest); ok {
				return v, !multi
			}
		}
		multi = multi || strings.Contains(line, `"""`) || strings.Contains(line, `'''`)
	}
	return "", false
}

// mentionsStateDir reports whether text could spell state_dir (or \u, \U).
func mentionsStateDir(text []byte) bool {
	for rest := text; ; {
		i := bytes.Index(rest, []byte("_dir")) // '_' is rare, 's' is not
		if i < 0 {
			return bytes.Contains(text, []byte(`\u`)) || bytes.Contains(text, []byte(`\U`))
		}
		if bytes.HasSuffix(rest[:i], []byte("state")) {
			return true
		}
		rest = rest[i+4:]
	}
}

// plainString reads the value text ` "value"  # comment` with no escape.
func plainString(v string) (string, bool) {
	v = cutComment(strings.TrimSpace(v))
	if len(v) < 2 || v[0] != '"' && v[0] != '\'' || v[len(v)-1] != v[0] {
		return "", false
	}
	q, v := v[0], v[1:len(v)-1]
	return v, strings.IndexByte(v, q) < 0 && !strings.Contains(v, `\`)
}
