package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
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
// cache under the state dir holds a compilation of the config's text, it
// opens that instead of parsing: parsing a mappings.toml of thousands of
// mappings takes far longer than a hook may. Close the result when done.
//
// A compilation is keyed by the SHA-256 of the text and of what else
// decides a parse (the index format, stopgate's version, the block cap); a
// load reads and hashes the text unless the file's stat fingerprint proves
// it unchanged since it was hashed (see fingerprint). Every part of the
// index is checked against a CRC as it is read, and it is written
// atomically. A cache that is missing, stale, corrupt or cannot be written
// costs a full parse, never a wrong answer. Errors are Load's: a config
// with mistakes is never cached.
func LoadCompiled(file, root string) (*Compiled, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	l := &loader{file: file, root: root, print: fingerprintOf(info), context: contextKey()}

	// Most projects keep the default state dir: look there before reading
	// the text to find out.
	home := cachePath(resolve(root, DefaultStateDir), file)
	if c := l.open(home, nil); c != nil {
		return c, nil
	}
	text, err := readAll(f, info.Size())
	if err != nil {
		return nil, err
	}
	if after, err := f.Stat(); err != nil || fingerprintOf(after) != l.print {
		l.print = fingerprint{} // changed while read: the text has no fingerprint
	}
	key := sha256.Sum256(text)
	l.key = &key
	guess := cachePath(resolve(root, stateDirGuess(text)), file)
	if c := l.open(home, text); c != nil {
		return c, nil
	}
	if guess != home {
		if c := l.open(guess, text); c != nil {
			return c, nil
		}
	}

	cfg, err := Parse(text, file, root)
	if err != nil {
		return nil, err
	}
	data := encode(cfg, l.context, key, l.print)
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
	print      fingerprint    // of the config file, zero when unknown
	context    string         // see contextKey
	key        *[keySize]byte // of the text, once read
}

// open returns the compilation cached at path if it is of the config's
// text, or nil. Before the text is read (text == nil) only a settled
// fingerprint can prove that; after, the key does.
func (l *loader) open(path string, text []byte) *Compiled {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	h, info, err := readCached(f)
	if err == nil && h.context == l.context {
		switch {
		case text == nil && h.print == l.print && h.print.settledBefore(info.ModTime()):
			c := newCompiled(h, f, l.file, l.root)
			c.closer = f
			return c
		case text != nil && h.key == *l.key:
			if h.print != l.print || !h.print.settledBefore(info.ModTime()) {
				l.refresh(path, f, info.Size())
			}
			c := newCompiled(h, f, l.file, l.root)
			c.closer, c.text = f, text
			return c
		}
	}
	f.Close()
	return nil
}

func readCached(f *os.File) (*head, os.FileInfo, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	h, err := readHead(f)
	return h, info, err
}

// refresh rewrites the cache at path with the config's current
// fingerprint, once that is settled: a config touched but not changed
// would otherwise be hashed on every load.
func (l *loader) refresh(path string, f *os.File, size int64) {
	if !l.print.settledBefore(time.Now()) {
		return
	}
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil {
		return
	}
	headEnd := binary.LittleEndian.Uint32(data[offHeadEnd:])
	if int64(headEnd) > size {
		return
	}
	l.print.put(data[offPrint:])
	sealHead(data[:headEnd])
	writeCache(path, data)
}

func readAll(f *os.File, size int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, size+1))
	_, err := buf.ReadFrom(f)
	return buf.Bytes(), err
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

// stateDirGuess reads state_dir from the config text without parsing it,
// for the plain spelling `state_dir = "dir"` (or 'dir') in [settings];
// anything else reads as the default. The cache is keyed by contents, so a
// wrong guess only misses it: LoadCompiled writes a cache only where the
// parsed state dir agrees with the guess.
func stateDirGuess(text []byte) string {
	const name = "state_dir"
	for i := 0; ; {
		j := bytes.Index(text[i:], []byte(name))
		if j < 0 {
			return DefaultStateDir
		}
		j += i
		i = j + len(name)
		start := bytes.LastIndexByte(text[:j], '\n') + 1
		if len(bytes.TrimSpace(text[start:j])) != 0 {
			continue // not the start of a line
		}
		end := bytes.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text) - i
		}
		v, ok := plainString(text[i : i+end])
		if ok && tableAt(text, start) == "[settings]" {
			return v
		}
	}
}

// plainString reads ` = "value"  # comment` with no escapes.
func plainString(s []byte) (string, bool) {
	s = bytes.TrimSpace(s)
	if len(s) == 0 || s[0] != '=' {
		return "", false
	}
	s = bytes.TrimSpace(s[1:])
	if len(s) < 2 || s[0] != '"' && s[0] != '\'' {
		return "", false
	}
	end := bytes.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", false
	}
	v, rest := s[1:1+end], bytes.TrimSpace(s[2+end:])
	if bytes.ContainsAny(v, "\\\n") || len(rest) > 0 && rest[0] != '#' {
		return "", false
	}
	return string(v), true
}

// tableAt returns the table header line in force at offset at, or "".
func tableAt(text []byte, at int) string {
	for at > 0 {
		start := bytes.LastIndexByte(text[:at-1], '\n') + 1
		line := bytes.TrimSpace(text[start : at-1])
		if len(line) > 0 && line[0] == '[' {
			if i := bytes.IndexByte(line, '#'); i >= 0 {
				line = bytes.TrimSpace(line[:i])
			}
			return string(line)
		}
		at = start
	}
	return ""
}
