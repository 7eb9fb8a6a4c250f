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
	"hash/crc32"
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
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ctx := contextKey()
	// Most projects keep the default state dir: its cache is tried first,
	// against the file as it is read, so that a hit holds no copy of a
	// text that may be megabytes long.
	home := cachePath(stateDir(root, ""), file)
	if c := readCache(home, f, ctx); c != nil {
		c.File, c.Root = file, root
		return c, nil
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dir, _ := stateDirIn(text, root, false) // a text that does not decode has no cache
	if at := cachePath(dir, file); at != home {
		if c := readCache(at, bytes.NewReader(text), ctx); c != nil {
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

// A cache file is the CRC-32 of its head line (four bytes, little-endian),
// the head line, the config text, then one line per record, sorted: each a
// kind letter, its key as a JSON string, a tab and its value as JSON. The
// records are the mappings ("m", by index), the validators ("v", by name),
// the mappings each path and command arms ("p", "c"), the run validators
// ("r": the guard asks for them at every write it judges), the validators'
// order ("o") and [telemetry] ("t"): a lookup finds its record by binary
// search and decodes it alone. The head holds the records' CRC-32: the
// checksums catch a torn or damaged file, the text a stale one.
type cacheHead struct {
	Context  string // see contextKey
	Key      [sha256.Size]byte
	Text     int64  // the text's length
	Records  uint32 // the records' CRC-32
	Settings Settings
}

// cached is where a config from the cache finds its records.
type cached struct {
	path string
	at   int64  // where the records start
	sum  uint32 // their CRC-32
	recs []byte // read on first need
}

func encodeCache(cfg *Config, text []byte, ctx string) []byte {
	var lines []string
	add := func(kind byte, key string, v any) {
		k, err1 := json.Marshal(key)
		b, err2 := json.Marshal(v)
		if err1 == nil && err2 == nil {
			lines = append(lines, string(kind)+string(k)+"\t"+string(b)+"\n")
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

	recs := []byte(strings.Join(lines, ""))
	h := cacheHead{Context: ctx, Key: cfg.key, Text: int64(len(text)), Records: crc32.ChecksumIEEE(recs), Settings: cfg.Settings}
	head, err := json.Marshal(h)
	if err != nil || len(lines) != len(byPath)+len(byCommand)+len(cfg.Mappings)+len(cfg.Order)+3 {
		return nil
	}
	out := binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(head))
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
	if err != nil || binary.LittleEndian.Uint32(sum[:]) != crc32.ChecksumIEEE(line[:len(line)-1]) ||
		json.Unmarshal(line, &h) != nil || h.Context != ctx {
		return nil
	}
	at := int64(len(sum) + len(line))
	if !sameText(config, io.NewSectionReader(f, at, h.Text), h.Text) {
		return nil
	}
	return &Config{Settings: h.Settings, key: h.Key, cached: &cached{path: path, at: at + h.Text, sum: h.Records}}
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

// fromCache reports whether c answers from the cache's records, reading
// them on first need. Records that do not read back as the head says (the
// cache rewritten since) cost a parse of the file, and c answers from
// that.
func (c *Config) fromCache() (bool, error) {
	switch {
	case c.cached == nil:
		return false, nil
	case c.cached.recs != nil:
		return true, nil
	}
	data, err := os.ReadFile(c.cached.path)
	if err == nil && int64(len(data)) > c.cached.at && crc32.ChecksumIEEE(data[c.cached.at:]) == c.cached.sum {
		c.cached.recs = data[c.cached.at:]
		return true, nil
	}
	text, err := os.ReadFile(c.File)
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

// record decodes into v the value of the record of kind and key, and
// reports whether there is one that decodes.
func (c *Config) record(kind byte, key string, v any) bool {
	k, err := json.Marshal(key)
	if err != nil {
		return false
	}
	prefix := append(append([]byte{kind}, k...), '\t')
	recs := c.cached.recs
	for len(recs) > 0 { // binary search on lines: cut at the line around the middle
		mid := bytes.LastIndexByte(recs[:len(recs)/2], '\n') + 1
		end := bytes.IndexByte(recs[mid:], '\n')
		if end < 0 {
			return false
		}
		line := recs[mid : mid+end]
		switch cmp := bytes.Compare(line[:min(len(line), len(prefix))], prefix); {
		case cmp == 0:
			return json.Unmarshal(line[len(prefix):], v) == nil
		case cmp < 0:
			recs = recs[mid+end+1:]
		default:
			recs = recs[:mid]
		}
	}
	return false
}

// errCache is a cache whose record does not decode: its checksum held, so
// only a stopgate that wrote it wrong could make one.
var errCache = errors.New("config cache: a record does not decode")

// cachedMatch returns the mappings the record of kind and key arms.
func (c *Config) cachedMatch(kind byte, key string, err error) ([]*Mapping, error) {
	if err != nil {
		return nil, err
	}
	var idx []int
	if !c.record(kind, key, &idx) {
		return nil, nil // no record: nothing mapped
	}
	maps := make([]*Mapping, len(idx))
	for j, i := range idx {
		maps[j] = new(Mapping)
		if !c.record('m', mappingKey(i), maps[j]) {
			return nil, errCache
		}
	}
	return maps, nil
}

// Full returns the config with every mapping and validator read: a config
// from the cache decodes them all from its records.
func (c *Config) Full() (*Config, error) {
	if ok, err := c.fromCache(); !ok {
		return c, err
	}
	full := &Config{File: c.File, Root: c.Root, Settings: c.Settings, key: c.key}
	if !c.record('o', "", &full.Order) || !c.record('t', "", &full.Telemetry) {
		return nil, errCache
	}
	full.Validators = make(map[string]*Validator, len(full.Order))
	for _, name := range full.Order {
		v := new(Validator)
		if !c.record('v', name, v) {
			return nil, errCache
		}
		full.Validators[name] = v
	}
	for line := range bytes.Lines(c.cached.recs) {
		if line[0] == 'm' {
			var m Mapping
			if _, v, ok := bytes.Cut(line, []byte("\t")); !ok || json.Unmarshal(v, &m) != nil {
				return nil, errCache
			}
			full.Mappings = append(full.Mappings, m)
		}
	}
	*c = *full
	return c, nil
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
	sweepCacheTemps(dir)
	atomicfile.Write(path, data, atomicfile.Options{TempPrefix: ".tmp-", NoSync: true})
}

// staleTemp is the age after which a cache temp file is taken for one left
// by a killed writer: a live writer renames its own within milliseconds.
const staleTemp = time.Minute

func sweepCacheTemps(dir string) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".tmp-") {
			continue
		}
		if info, err := de.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}
