package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/buildinfo"
)

// CacheDir is where, under the state dir, LoadCompiled keeps compiled
// configs.
const CacheDir = "cache"

// LoadCompiled is Parse of the config file for a hook that answers one
// event. When the index cache under the state dir holds a compilation of
// the config's exact text, it opens that instead of parsing: parsing a
// mappings.toml of thousands of mappings takes far longer than a hook
// may. Close the result when done.
//
// A compilation holds the text it was compiled from, and is used only
// when that equals the config file byte for byte, as read at this load: a
// file's stat (size, times, inode) can be made to match another text, and
// a cache trusted on it could disarm every prompt while git shows nothing
// changed. It holds what else decides a parse too (the index format,
// stopgate's version, the block cap), and must match that as well. Every
// other part of the index is checked against a CRC as it is read, and it
// is written atomically. A cache that is missing, stale, corrupt or cannot
// be written costs a full parse, never a wrong answer. Errors are the
// file's and Parse's: a config with mistakes is never cached.
func LoadCompiled(file, root string) (*Compiled, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l := &loader{file: file, root: root, context: contextKey()}

	// Most projects keep the default state dir: its cache is tried first,
	// against the file as it is read, so that a hit holds no copy of a
	// text that may be megabytes long.
	home := cachePath(stateDir(root, ""), file)
	if c := l.open(home, f); c != nil {
		return c, nil
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dir, _ := stateDirIn(text, root, false) // a text that does not decode has no cache
	if at := cachePath(dir, file); at != home {
		if c := l.open(at, bytes.NewReader(text)); c != nil {
			c.text = text
			return c, nil
		}
	}

	cfg, err := Parse(text, file, root)
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(text)
	writeCache(cachePath(cfg.StateDir(), file), encode(cfg, text, l.context, key))
	c := cfg.Compiled()
	c.key, c.text = key, text
	return c, nil
}

// loader opens cached compilations of one config file.
type loader struct {
	file, root string
	context    string // see contextKey
}

// open returns the compilation cached at path if it was compiled from the
// text that config reads to its end, or nil.
func (l *loader) open(path string, config io.Reader) *Compiled {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	h, err := readHead(f)
	if err != nil || h.context != l.context || !sameText(config, io.NewSectionReader(f, h.textAt, h.textLen), h.textLen) {
		f.Close()
		return nil
	}
	return newCompiled(h, f, l.file, l.root)
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

// contextKey says what besides the text decides a parse, so that a
// compilation is never read by a stopgate with other rules. It is kept
// as it is, not hashed: a load compares it before the text is read.
func contextKey() string {
	return "stopgate " + buildinfo.Read().String() + ", block cap " + strconv.Itoa(BlockCap(os.Getenv))
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
