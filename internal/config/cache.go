package config

import (
	"bufio"
	"bytes"
	"cmp"
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
	textChunk = 32 << 10    // how much of each text sameText reads at a time
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
	cfg, err := load(f, file, root)
	if err == nil {
		cfg.File, cfg.Root = file, root
	}
	return cfg, err
}

func load(f *os.File, file, root string) (*Config, error) {
	ctx := contextKey()
	// The default state dir's cache first, compared as the file streams
	// by; its hit counts only for a text that cannot name another state
	// dir, where the guard would not protect a cache planted here.
	home := cachePath(stateDir(root, ""), file)
	m := &mentions{r: f}
	hit := readCache(home, m, ctx)
	if hit != nil && !m.seen {
		return hit, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	text, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	if dir, known := textStateDir(text, root); known {
		if hit != nil && cachePath(dir, file) == home { // gate init's starter names the default
			return hit, nil
		}
		if c := readCache(cachePath(dir, file), bytes.NewReader(text), ctx); c != nil {
			return c, nil
		}
	}
	cfg, err := Parse(text, file, root)
	if err == nil {
		writeCache(cachePath(cfg.StateDir(), file), encodeCache(cfg, text, ctx))
	}
	return cfg, err
}

// mentions reads through r, noting whether the text could spell state_dir
// (mentionsStateDir).
type mentions struct {
	r    io.Reader
	tail []byte // the last bytes read, for a needle across two reads
	seen bool
}

func (m *mentions) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if !m.seen && n > 0 {
		edge := append(m.tail, p[:min(n, 8)]...) // a needle across two reads
		m.seen = mentionsStateDir(edge) || mentionsStateDir(p[:n])
		last := append(m.tail, p[max(0, n-8):n]...) // the stream's last 8 bytes
		m.tail = append(m.tail[:0], last[max(0, len(last)-8):]...)
	}
	return n, err
}

// mentionsStateDir reports whether b holds "state_dir", \u or \U, found
// by their rare bytes: a hook pays this on every byte of the config.
func mentionsStateDir(b []byte) bool {
	return anyAt(b, '_', func(i int) bool { return i >= 5 && i+4 <= len(b) && string(b[i-5:i+4]) == "state_dir" }) ||
		anyAt(b, '\\', func(i int) bool { return i+1 < len(b) && (b[i+1] == 'u' || b[i+1] == 'U') })
}

// anyAt reports whether at holds at some index of c in b.
func anyAt(b []byte, c byte, at func(int) bool) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(b[i:], c)
		if j < 0 {
			return false
		}
		if i += j; at(i) {
			return true
		}
	}
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
	path string
	head []byte // the checksum and the head line
	at   int64  // where the records start
	end  int64  // where they end: the file's size
}

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
	for k, ms := range tables {
		add(k[0], k[1:], ms)
	}
	for i, m := range cfg.Mappings {
		add('m', mappingKey(i), m)
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
	if err != nil || len(lines) != len(tables)+len(cfg.Mappings)+len(cfg.Order)+1 {
		return nil
	}
	out := binary.LittleEndian.AppendUint32(nil, checksum(head))
	out = append(append(out, head...), '\n')
	return append(append(out, text...), recs...)
}

// mappingKey is the i-th mapping's record key, fixed-width to sort in order.
func mappingKey(i int) string { return fmt.Sprintf("%010d", i) }

// readCache returns the config cached at path if it was parsed from the
// text config reads under ctx, else nil; only its head is decoded.
func readCache(path string, config io.Reader, ctx string) *Config {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var sum [4]byte
	var h cacheHead
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil
	}
	line, err := r.ReadBytes('\n')
	if err != nil || binary.LittleEndian.Uint32(sum[:]) != checksum(line[:len(line)-1]) ||
		json.Unmarshal(line, &h) != nil || h.Context != ctx {
		return nil
	}
	at := int64(len(sum) + len(line))
	if !sameText(config, io.NewSectionReader(f, at, h.Text), h.Text) {
		return nil
	}
	head := append(sum[:], line...)
	return &Config{Settings: h.Settings, key: h.Key, cached: &cached{path: path, head: head, at: at + h.Text, end: at + h.Text + h.Records}}
}

// sameText reports whether a and b, said to be size bytes long, read the
// same bytes to their ends; a read error is a difference.
func sameText(a, b io.Reader, size int64) bool {
	chunk := int(min(size+1, textChunk)) // a short text in one read; a longer a fails at once
	buf := make([]byte, 2*chunk)
	x, y := buf[:chunk], buf[chunk:]
	for {
		n, errA := io.ReadFull(a, x)
		m, errB := io.ReadFull(b, y)
		if n != m || errA != errB || !bytes.Equal(x[:n], y[:m]) {
			return false
		}
		if errA != nil {
			return errA == io.EOF || errA == io.ErrUnexpectedEOF
		}
	}
}

// errCache is a cache file damaged or rewritten since the load.
var errCache = errors.New("config cache changed or damaged")

// fromCache asks a cached config's records and reports whether they
// answered; when they cannot, the file is parsed into c for the caller.
func (c *Config) fromCache(ask func(*records) error) (bool, error) {
	if c.cached == nil {
		return false, nil
	}
	if c.cached.ask(ask) == nil {
		return true, nil
	}
	text, err := readText(c.File)
	if err != nil {
		return false, err
	}
	parsed, err := Parse(text, c.File, c.Root)
	if err != nil {
		return false, err
	}
	*c = *parsed
	return false, nil
}

func (cc *cached) ask(ask func(*records) error) error {
	f, err := os.Open(cc.path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	head := make([]byte, len(cc.head))
	if err != nil || st.Size() != cc.end {
		return errCache
	}
	if _, err := f.ReadAt(head, 0); err != nil || !bytes.Equal(head, cc.head) {
		return errCache
	}
	return ask(&records{f: f, lo: cc.at, hi: cc.end})
}

// records are the sorted lines of a cache file between lo and hi.
type records struct {
	f      io.ReaderAt
	lo, hi int64
}

// line returns the line at off, without its newline.
func (r *records) line(off int64) ([]byte, error) {
	line, err := bufio.NewReaderSize(io.NewSectionReader(r.f, off, r.hi-off), 512).ReadBytes('\n')
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

// get decodes into v the record of kind and key, reporting whether it exists.
func (r *records) get(kind byte, key string, v any) (bool, error) {
	k, err := json.Marshal(key)
	if err != nil {
		return false, err
	}
	prefix := append(append([]byte{kind}, k...), '\t')
	lo, hi := r.lo, r.hi // lo is always at the start of a line
	for lo < hi {
		s := lo + (hi-lo)/2 // the first line that starts at or after the middle
		if s > lo {
			before, err := r.line(s - 1)
			if err != nil {
				return false, err
			}
			s += int64(len(before))
		}
		if s >= hi {
			s = lo
		}
		line, err := r.line(s)
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

// match returns the mappings the record of kind and key arms.
func (r *records) match(kind byte, key string) ([]*Mapping, error) {
	var idx []int
	if ok, err := r.get(kind, key, &idx); !ok {
		return nil, err // no record: nothing mapped
	}
	maps := make([]*Mapping, len(idx))
	for j, i := range idx {
		if err := r.must('m', mappingKey(i), &maps[j]); err != nil {
			return nil, err
		}
	}
	return maps, nil
}

// must is get of a record that must exist.
func (r *records) must(kind byte, key string, v any) error {
	if ok, err := r.get(kind, key, v); !ok {
		return cmp.Or(err, errCache)
	}
	return nil
}

// Full returns the config with every mapping and validator: one from the
// cache parses the text its cache holds, which the load compared.
func (c *Config) Full() (*Config, error) {
	var text []byte
	ok, err := c.fromCache(func(r *records) error {
		start := int64(len(c.cached.head))
		text = make([]byte, r.lo-start)
		if _, err := r.f.ReadAt(text, start); err != nil || sha256.Sum256(text) != c.key {
			return errCache
		}
		return nil
	})
	if !ok {
		return c, err
	}
	parsed, err := Parse(text, c.File, c.Root)
	if err != nil {
		return c, err
	}
	*c = *parsed
	return c, nil
}

// checksum finds a torn or damaged cache, not a forged one: the exact-text
// check finds a cache of another text, but records forged beside the right
// text only the guard keeps out, by keeping the agent out of the state
// dir. FNV-1a builds no tables at start-up.
func checksum(b []byte) uint32 {
	h := fnv.New32a()
	h.Write(b)
	return h.Sum32()
}

// contextKey is what besides the text decides a parse.
func contextKey() string {
	return "stopgate " + buildinfo.Read().String() + ", block cap " + strconv.Itoa(BlockCap(os.Getenv))
}

// cachePath names the cache of config file under stateDir, one per file
// (a collision shares one, which its text still tells apart).
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
// lost or torn cache fails its checks and costs one parse.
func writeCache(path string, data []byte) {
	dir := filepath.Dir(path)
	if data == nil || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	queue.Sweep(dir, queue.Leftover{Prefix: queue.TempPrefix, Age: staleTemp})
	atomicfile.Write(path, data, atomicfile.Options{TempPrefix: queue.TempPrefix, NoSync: true})
}
