package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
)

// CacheDir is where, under the state dir, LoadCompiled keeps compiled
// configs.
const CacheDir = "cache"

// LoadCompiled is Load for a hook that answers one event. When the index
// cache under the state dir holds a compilation of the config's exact
// text, it opens that instead of parsing: parsing a mappings.toml of
// thousands of mappings takes far longer than a hook may. Close the result
// when done.
//
// A compilation is keyed by the SHA-256 of the text and of what else
// decides a parse (the index format, stopgate's version, the block cap),
// and the text is read and hashed on every load: a file's stat (size,
// times, inode) can be made to match another text, and a cache trusted on
// it could disarm every prompt while git shows nothing changed. Every part
// of the index is checked against a CRC as it is read, and it is written
// atomically. A cache that is missing, stale, corrupt or cannot be written
// costs a full parse, never a wrong answer. Errors are Load's: a config
// with mistakes is never cached.
func LoadCompiled(file, root string) (*Compiled, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(text)
	l := &loader{file: file, root: root, context: contextKey(), key: key}

	// Most projects keep the default state dir: look there first.
	home := cachePath(stateDir(root, ""), file)
	if c := l.open(home, text); c != nil {
		return c, nil
	}
	dir, _ := stateDirIn(text, root, false) // a text that does not decode has no cache
	guess := cachePath(dir, file)
	if guess != home {
		if c := l.open(guess, text); c != nil {
			return c, nil
		}
	}

	cfg, err := Parse(text, file, root)
	if err != nil {
		return nil, err
	}
	data := encode(cfg, l.context, key)
	h, err := readHead(bytes.NewReader(data))
	if err != nil {
		return nil, err // a bug in encode: tests guard against it
	}
	c := newCompiled(h, bytes.NewReader(data), file, root)
	c.text, c.full = text, cfg
	if path := cachePath(cfg.StateDir(), file); path == home || path == guess {
		writeCache(path, data)
	}
	return c, nil
}

// loader opens cached compilations of one config file.
type loader struct {
	file, root string
	context    string // see contextKey
	key        [keySize]byte
}

// open returns the compilation cached at path if it is of the config's
// text, or nil.
func (l *loader) open(path string, text []byte) *Compiled {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	h, err := readHead(f)
	if err != nil || h.context != l.context || h.key != l.key {
		f.Close()
		return nil
	}
	c := newCompiled(h, f, l.file, l.root)
	c.closer, c.text = f, text
	return c
}

// contextKey says what besides the text decides a parse, so that a
// compilation is never read by a stopgate with other rules. It is kept
// as it is, not hashed: a load compares it before the text is read.
func contextKey() string {
	return "stopgate " + buildVersion() + ", block cap " + strconv.Itoa(BlockCap(os.Getenv))
}

// buildVersion is the stopgate version the binary was built from, so that
// an upgrade with new config rules does not read an older compilation.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			v += " " + s.Value
		}
	}
	return v
}

// cachePath names the cache of config file under stateDir: one per config
// file, so that a project with several configs keeps each warm. Two files
// whose names collide only share, and rewrite, one cache: its key still
// tells their texts apart.
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
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
