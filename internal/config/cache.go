package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"hash/fnv"
	"os"
	"path/filepath"
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
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	ctx := contextKey()
	// Most projects keep the default state dir: its cache is tried first,
	// before the text is scanned for another.
	home := cachePath(stateDir(root, ""), file)
	if c := readCache(home, text, ctx); c != nil {
		c.File, c.Root = file, root
		return c, nil
	}
	dir, _ := stateDirIn(text, root, false) // a text that does not decode has no cache
	if at := cachePath(dir, file); at != home {
		if c := readCache(at, text, ctx); c != nil {
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

// A cache file is the CRC-32 of what follows (four bytes, little-endian),
// a header line, the config text, a line of the run validators (the guard
// asks for them at every write it judges), then the rest of the config;
// all but the text are JSON. The checksum catches a torn or damaged file, the
// text a stale one.
type cacheHead struct {
	Context  string // see contextKey
	Key      [sha256.Size]byte
	Text     int // the text's length
	Settings Settings
}

type cacheRest struct {
	Mappings   []Mapping
	Validators []*Validator // in file order
	Telemetry  Telemetry
}

func encodeCache(cfg *Config, text []byte, ctx string) []byte {
	head, err := json.Marshal(cacheHead{Context: ctx, Key: cfg.key, Text: len(text), Settings: cfg.Settings})
	if err != nil {
		return nil
	}
	rest := cacheRest{Mappings: cfg.Mappings, Telemetry: cfg.Telemetry}
	var runs [][2]string
	for _, name := range cfg.Order {
		v := cfg.Validators[name]
		rest.Validators = append(rest.Validators, v)
		if v.Run != "" {
			runs = append(runs, [2]string{v.Name, v.Run})
		}
	}
	runsJSON, err := json.Marshal(runs)
	if err != nil {
		return nil
	}
	body, err := json.Marshal(rest)
	if err != nil {
		return nil
	}
	out := make([]byte, 4, 4+len(head)+len(text)+len(runsJSON)+len(body)+2)
	out = append(append(out, head...), '\n')
	out = append(append(out, text...), runsJSON...)
	out = append(append(out, '\n'), body...)
	binary.LittleEndian.PutUint32(out, crc32.ChecksumIEEE(out[4:]))
	return out
}

// readCache returns the config cached at path if it was parsed from text
// under ctx, or nil. Only its head is decoded; the rest waits for Full.
func readCache(path string, text []byte, ctx string) *Config {
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 4 || binary.LittleEndian.Uint32(data) != crc32.ChecksumIEEE(data[4:]) {
		return nil
	}
	line, after, ok := bytes.Cut(data[4:], []byte("\n"))
	var h cacheHead
	if !ok || json.Unmarshal(line, &h) != nil || h.Context != ctx || h.Text != len(text) ||
		!bytes.Equal(after[:min(len(after), len(text))], text) || len(after) == len(text) {
		return nil
	}
	return &Config{Settings: h.Settings, key: h.Key, rest: after[len(text):]}
}

// Full returns the config with every mapping and validator read: a config
// from the cache decodes them on the first question that needs them, and
// parses the file instead when they do not decode.
func (c *Config) Full() (*Config, error) {
	if c.rest == nil {
		return c, nil
	}
	_, rest, _ := bytes.Cut(c.rest, []byte("\n"))
	var r cacheRest
	if err := json.Unmarshal(rest, &r); err == nil {
		c.rest = nil
		c.Mappings, c.Telemetry = r.Mappings, r.Telemetry
		c.Validators = make(map[string]*Validator, len(r.Validators))
		c.Order = make([]string, len(r.Validators))
		for i, v := range r.Validators {
			c.Validators[v.Name], c.Order[i] = v, v.Name
		}
		return c, nil
	}
	text, err := os.ReadFile(c.File)
	if err != nil {
		return nil, err
	}
	parsed, err := Parse(text, c.File, c.Root)
	if err != nil {
		return nil, err
	}
	*c = *parsed
	return c, nil
}

// cachedRuns returns the run validators of a config from the cache, from
// their own line, or false when that does not decode.
func (c *Config) cachedRuns() ([]*Validator, bool) {
	line, _, _ := bytes.Cut(c.rest, []byte("\n"))
	var runs [][2]string
	if json.Unmarshal(line, &runs) != nil {
		return nil, false
	}
	out := make([]*Validator, len(runs))
	for i, r := range runs {
		out[i] = &Validator{Name: r[0], Run: r[1]}
	}
	return out, true
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
