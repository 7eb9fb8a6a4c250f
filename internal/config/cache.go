package config

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/buildinfo"
	"github.com/stopgate/stopgate/internal/queue"
)

const (
	CacheDir  = "cache"     // where, under the state dir, Load keeps parsed configs
	staleTemp = time.Minute // the age of a cache temp file left by a killed writer
)

// Load is Parse of the config file for a hook, from the cache under the
// state dir when it holds a parse of the config's exact text, never
// trusted on a stat (docs/config.md#the-cache).
func Load(file, root string) (*Config, error) {
	f, err := openText(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Only the cache in the state dir the text names counts: the guard
	// protects that one. The default's counts for a text that names none.
	ctx := contextKey()
	home := cachePath(stateDir(root, ""), file)
	hit, mentions := readCache(home, f, ctx)
	if hit == nil || mentions {
		hit = nil
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		text, err := io.ReadAll(f)
		if err != nil {
			return nil, err
		}
		dir, known := textStateDir(text, root)
		if known {
			hit, _ = readCache(cachePath(dir, file), bytes.NewReader(text), ctx)
		}
		if hit == nil {
			return parseAndCache(text, file, root, ctx)
		}
	}
	hit.File, hit.Root = file, root
	return hit, nil
}

func parseAndCache(text []byte, file, root, ctx string) (*Config, error) {
	cfg, err := Parse(text, file, root)
	if err == nil {
		writeCache(cachePath(cfg.StateDir(), file), encodeCache(cfg, text, ctx))
	}
	return cfg, err
}

// A cache file is a checksum (4 bytes LE) of its head line, the head line,
// the config text, then sorted record lines: kind letter, JSON key, tab,
// JSON value, tab, hex checksum of the line so far (docs/config.md#the-cache).
type cacheHead struct {
	Context  string // see contextKey
	Key      [sha256.Size]byte
	Text     int64 // the text's length
	Records  int64 // the records' length: a torn file is short
	Settings Settings
}

// cached is where a config from the cache finds its records: the file at
// path, while its head is the one read at the load.
type cached struct {
	path    string
	head    []byte // the checksum and the head line
	text    int64  // where the text starts
	at, end int64  // where the records start and end (the file's size)
}

// encodeCache is the cache of cfg: each path and command record holds the
// mappings it arms, each validator record the validator, and the 'r'
// record the run validators' names and commands (all the guard reads).
func encodeCache(cfg *Config, text []byte, ctx string) []byte {
	var lines []string
	add := func(kind byte, key string, v any) {
		k, err1 := json.Marshal(key)
		b, err2 := json.Marshal(v)
		if err1 == nil && err2 == nil {
			line := string(kind) + string(k) + "\t" + string(b)
			lines = append(lines, fmt.Sprintf("%s\t%08x\n", line, checksum([]byte(line))))
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
	sort.Strings(lines)
	recs := strings.Join(lines, "")
	h := cacheHead{Context: ctx, Key: cfg.key, Text: int64(len(text)), Records: int64(len(recs)), Settings: cfg.Settings}
	head, err := json.Marshal(h)
	if err != nil || len(lines) != len(tables)+len(cfg.Order)+1 {
		return nil
	}
	out := binary.LittleEndian.AppendUint32(nil, checksum(head))
	out = append(append(out, head...), '\n')
	return append(append(out, text...), recs...)
}

// readCache returns the config cached at path if it was parsed from the
// text config reads under ctx, else nil, and whether that text mentions a
// state dir; only its head is decoded.
func readCache(path string, config io.Reader, ctx string) (*Config, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var sum [4]byte
	var h cacheHead
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil, false
	}
	line, err := r.ReadBytes('\n')
	if err != nil || binary.LittleEndian.Uint32(sum[:]) != checksum(line[:len(line)-1]) ||
		json.Unmarshal(line, &h) != nil || h.Context != ctx {
		return nil, false
	}
	at := int64(len(sum) + len(line))
	same, mentions := sameText(config, io.NewSectionReader(f, at, h.Text), h.Text)
	if !same {
		return nil, false
	}
	return &Config{Settings: h.Settings, key: h.Key, cached: &cached{path: path, head: append(sum[:], line...),
		text: at, at: at + h.Text, end: at + h.Text + h.Records}}, mentions
}

// sameText reports whether a and b, said to be size bytes long, read the
// same bytes to their ends (a read error is a difference), and whether
// they mention a state dir, looking across reads through the last 8 bytes.
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

// fromCache decodes into v the record of kind and key, reporting whether
// the cache answered; when it cannot, the file is parsed into c for the
// caller. A missing record is a zero v, unless it must exist.
func (c *Config) fromCache(kind byte, key string, must bool, v any) (bool, error) {
	if c.cached == nil {
		return false, nil
	}
	found, err := c.cached.get(kind, key, v)
	if err == nil && (found || !must) {
		return true, nil
	}
	text, err := readText(c.File)
	if err == nil {
		err = c.reparse(text)
	}
	return false, err
}

// reparse makes c the parse of text.
func (c *Config) reparse(text []byte) error {
	parsed, err := Parse(text, c.File, c.Root)
	if err == nil {
		*c = *parsed
	}
	return err
}

// get finds the record of kind and key by binary search in the file, while
// its head is the one read at the load, and decodes it into v.
func (cc *cached) get(kind byte, key string, v any) (bool, error) {
	f, err := os.Open(cc.path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(cc.head))
	if st, err := f.Stat(); err != nil || st.Size() != cc.end {
		return false, errCache
	}
	if _, err := f.ReadAt(head, 0); err != nil || !bytes.Equal(head, cc.head) {
		return false, errCache
	}
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
		val, err := value(line) // every line it passes: a damaged key would hide a record
		if err != nil {
			return false, err
		}
		switch cmp := bytes.Compare(line[:min(len(line), len(prefix))], prefix); {
		case cmp == 0:
			if json.Unmarshal(val, v) != nil {
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

// value returns the value of a line whose checksum holds.
func value(line []byte) ([]byte, error) {
	i := bytes.LastIndexByte(line, '\t')
	j := bytes.IndexByte(line, '\t')
	if i <= j || fmt.Sprintf("%08x", checksum(line[:i])) != string(line[i+1:]) {
		return nil, errCache
	}
	return line[j+1 : i], nil
}

// Full returns the config with every mapping and validator: one from the
// cache parses the text its cache holds, which the load compared.
func (c *Config) Full() (*Config, error) {
	if c.cached == nil {
		return c, nil
	}
	text := make([]byte, c.cached.at-c.cached.text)
	f, err := os.Open(c.cached.path)
	if err == nil {
		defer f.Close()
		_, err = f.ReadAt(text, c.cached.text)
	}
	if err != nil || sha256.Sum256(text) != c.key {
		if text, err = readText(c.File); err != nil { // the cache is gone: the file as it is now
			return c, err
		}
	}
	return c, c.reparse(text)
}

// checksum finds a torn or damaged cache, not a forged one, which only
// the guard keeps out. FNV-1a builds no tables at start-up.
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

// writeCache writes data to path atomically, best effort and unsynced: a
// torn cache fails its checks.
func writeCache(path string, data []byte) {
	dir := filepath.Dir(path)
	if data == nil || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	queue.Sweep(dir, queue.Leftover{Prefix: queue.TempPrefix, Age: staleTemp})
	atomicfile.Write(path, data, atomicfile.Options{TempPrefix: queue.TempPrefix, NoSync: true})
}
