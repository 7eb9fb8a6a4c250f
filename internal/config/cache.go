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

// CacheDir is where, under the state dir, Load keeps parsed configs.
const CacheDir = "cache"

// Load is Parse of the config file for a hook that answers one event.
// When the cache under the state dir holds a parse of the config's exact
// text, it reads that instead of parsing: parsing a mappings.toml of
// thousands of mappings takes far longer than a hook may.
//
// A cache file holds the text it was parsed from, and is used only when
// that equals the config file byte for byte, as read at this load: a
// file's stat (size, times, inode) can be made to match another text, and
// a cache trusted on it could disarm every prompt while git shows nothing
// changed. It holds what else decides a parse too (stopgate's version, the
// block cap), and must match that as well; it is written atomically. A
// cache that is missing, stale, corrupt or cannot be written costs a full
// parse, never a wrong answer. Errors are the file's and Parse's: a config
// with mistakes is never cached.
func Load(file, root string) (*Config, error) {
	f, err := openText(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ctx := contextKey()
	// Most projects keep the default state dir: its cache is tried first,
	// against the file as it is read, so that a hit holds no copy of a
	// text that may be megabytes long. It counts only for a text that
	// cannot name another state dir: the guard protects the state dir the
	// config names, and a cache planted where it does not look would
	// answer for the config.
	home := cachePath(stateDir(root, ""), file)
	m := &mentions{r: f}
	hit := readCache(home, m, ctx)
	if hit != nil && !m.seen {
		hit.File, hit.Root = file, root
		return hit, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	text, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	// Elsewhere, only where the text keeps its state dir: as the plain scan
	// reads it when it is sure, else as the decoder reads [settings] alone.
	dir, known := textStateDir(text, root)
	if known && hit != nil && cachePath(dir, file) == home { // gate init's starter names the default
		hit.File, hit.Root = file, root
		return hit, nil
	}
	if known {
		if c := readCache(cachePath(dir, file), bytes.NewReader(text), ctx); c != nil {
			c.File, c.Root = file, root
			return c, nil
		}
	}
	cfg, err := Parse(text, file, root)
	if err != nil {
		return nil, err
	}
	writeCache(cachePath(cfg.StateDir(), file), encodeCache(cfg, text, ctx))
	return cfg, nil
}

// mentions reads through r and notes whether the text mentions state_dir,
// or an escape that could spell it (\u, \U): a text that does neither
// keeps the default state dir (plainStateDir).
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

// mentionsStateDir reports whether b holds "state_dir", \u or \U. It
// looks for the rare bytes (_ and \) with IndexByte: a hook pays this on
// every byte of the config.
func mentionsStateDir(b []byte) bool {
	for i := 0; ; i++ {
		j := bytes.IndexByte(b[i:], '_')
		if j < 0 {
			break
		}
		if i += j; i >= 5 && i+4 <= len(b) && string(b[i-5:i+4]) == "state_dir" {
			return true
		}
	}
	for i := 0; ; i++ {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return false
		}
		if i += j; i+1 < len(b) && (b[i+1] == 'u' || b[i+1] == 'U') {
			return true
		}
	}
}

// A cache file is the checksum of its head line (four bytes, little-endian),
// the head line, the config text, then one line per record, sorted: each a
// kind letter, its key as a JSON string, a tab, its value as JSON, a tab
// and the checksum of what precedes it on the line, in hex. The records are
// the mappings ("m", by index), the validators ("v", by name), the
// mappings each path and command arms ("p", "c"), the run validators ("r":
// the guard asks for them at every write it judges), the validators' order
// ("o") and [telemetry] ("t"). A lookup finds its record by binary search
// in the file and decodes it alone, so that an event reads a few lines
// however large the config. The checksums catch a torn or damaged file,
// the text a stale one.
//
// Records, not one encoding of the whole Config after the text: a matched
// Read would then decode every mapping and validator to use one. Measured
// in-process on the bench's projects (1,000 / 10,000 mappings), decoding
// the encoding/gob of a Config took 16 / 150 ms and its JSON 52 / 648 ms,
// where a load and lookup of its records took 0.14 / 5.9 ms. In make bench,
// a matched Read at 10,000 mappings went from 2.6x the floor to 30x.
type cacheHead struct {
	Context  string // see contextKey
	Key      [sha256.Size]byte
	Text     int64 // the text's length
	Records  int64 // the records' length: a torn file is short
	Settings Settings
}

// cached is where a config from the cache finds its records: the file at
// path, as long as its head is the one read at the load. The head holds
// the text's SHA-256: a file rewritten since for the same text holds the
// same records.
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
	byPath, byCommand := cfg.tables()
	for k, ms := range byPath {
		add('p', k, ms)
	}
	for k, ms := range byCommand {
		add('c', k, ms)
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
	add('o', "", cfg.Order)
	add('t', "", cfg.Telemetry)
	sort.Strings(lines)

	recs := strings.Join(lines, "")
	h := cacheHead{Context: ctx, Key: cfg.key, Text: int64(len(text)), Records: int64(len(recs)), Settings: cfg.Settings}
	head, err := json.Marshal(h)
	if err != nil || len(lines) != len(byPath)+len(byCommand)+len(cfg.Mappings)+len(cfg.Order)+3 {
		return nil
	}
	out := binary.LittleEndian.AppendUint32(nil, checksum(head))
	out = append(append(out, head...), '\n')
	return append(append(out, text...), recs...)
}

// mappingKey is the key of the i-th mapping's record, fixed-width so that
// records sort in file order.
func mappingKey(i int) string { return fmt.Sprintf("%010d", i) }

// readCache returns the config cached at path if it was parsed from the
// text that config reads to its end under ctx, or nil. Only its head is
// decoded; the records wait for a question.
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

// textChunk is how much of each text sameText reads at a time: the texts
// are compared as they stream by, never held whole.
const textChunk = 32 << 10

// sameText reports whether a and b read the same bytes to their ends; b
// is size bytes long, if it is what it claims. A read error is a
// difference.
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

// errCache is a cache file that is not what its head said: damaged, or
// rewritten for another text since the load.
var errCache = errors.New("config cache changed or damaged")

// fromCache asks the cache's records, for a config from the cache, and
// reports whether they answered. When they cannot (see errCache), the
// file is parsed into c, and the caller answers from that.
func (c *Config) fromCache(ask func(*records) error) (bool, error) {
	if c.cached == nil {
		return false, nil
	}
	err := c.cached.ask(ask)
	if err == nil {
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

// ask opens the cache file for ask, if it has the head read at the load.
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
	var line []byte
	buf := make([]byte, 512)
	for off < r.hi {
		n, err := r.f.ReadAt(buf[:min(int64(len(buf)), r.hi-off)], off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(line, buf[:i]...), nil
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		line, off = append(line, buf[:n]...), off+int64(n)
	}
	return nil, errCache // no newline: torn
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

// get decodes into v the value of the record of kind and key, and reports
// whether there is one.
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
		maps[j] = new(Mapping)
		if ok, err := r.get('m', mappingKey(i), maps[j]); !ok {
			return nil, cmp.Or(err, errCache)
		}
	}
	return maps, nil
}

// Full returns the config with every mapping and validator read: a config
// from the cache decodes them all from its records.
func (c *Config) Full() (*Config, error) {
	full := &Config{File: c.File, Root: c.Root, Settings: c.Settings, key: c.key, Validators: map[string]*Validator{}}
	ok, err := c.fromCache(func(r *records) error {
		data := make([]byte, r.hi-r.lo)
		if _, err := r.f.ReadAt(data, r.lo); err != nil {
			return err
		}
		for line := range bytes.Lines(data) {
			val, err := value(bytes.TrimSuffix(line, []byte("\n")))
			if err != nil {
				return err
			}
			var dst any
			switch line[0] {
			case 'm':
				full.Mappings = append(full.Mappings, Mapping{})
				dst = &full.Mappings[len(full.Mappings)-1]
			case 'v':
				dst = new(Validator)
			case 'o':
				dst = &full.Order
			case 't':
				dst = &full.Telemetry
			default:
				continue
			}
			if json.Unmarshal(val, dst) != nil {
				return errCache
			}
			if v, ok := dst.(*Validator); ok {
				full.Validators[v.Name] = v
			}
		}
		return nil
	})
	if ok {
		*c = *full
	}
	return c, err
}

// checksum is the FNV-1a hash the cache's lines and head carry: it finds
// a torn or damaged file (never an attacker's: the guard keeps the agent
// out of the state dir, and a hit needs the config's exact text), and
// costs no tables at start-up, as hash/crc32's do.
func checksum(b []byte) uint32 {
	h := fnv.New32a()
	h.Write(b)
	return h.Sum32()
}

// contextKey says what besides the text decides a parse, so that a cache
// is never read by a stopgate with other rules.
func contextKey() string {
	return "stopgate " + buildinfo.Read().String() + ", block cap " + strconv.Itoa(BlockCap(os.Getenv))
}

// cachePath names the cache of config file under stateDir: one per config
// file, so that a project with several configs keeps each warm. Two files
// whose names collide only share, and rewrite, one cache: its text still
// tells them apart.
func cachePath(stateDir, file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	h := fnv.New64a()
	h.Write([]byte(abs))
	return filepath.Join(stateDir, CacheDir, "mappings-"+hex.EncodeToString(h.Sum(nil))+".idx")
}

// writeCache writes data to path atomically, on a best-effort basis: a
// hook never fails because its cache could not be written. There is no
// fsync: a cache lost or torn by a power cut fails its checks and costs
// one parse.
func writeCache(path string, data []byte) {
	dir := filepath.Dir(path)
	if data == nil || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	queue.Sweep(dir, queue.Leftover{Prefix: queue.TempPrefix, Age: staleTemp})
	atomicfile.Write(path, data, atomicfile.Options{TempPrefix: queue.TempPrefix, NoSync: true})
}

// staleTemp is the age after which a cache temp file is taken for one left
// by a killed writer: a live writer renames its own within milliseconds.
const staleTemp = time.Minute
