package config

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"maps"
	"slices"
	"sort"
)

// The compiled form of a config, as the index cache holds it. The head
// (fixed fields, context, settings) is read and checked first; the tables
// only when a lookup needs them, and records one at a time, each checked
// on its own, so that an event costs a few reads however large the config.
//
//	0   magic "SGIX", uint32 format version
//	8   uint32 CRC-32 of the rest of the head (bytes 12 to headEnd)
//	12  uint32 headEnd: where the tables start
//	16  uint32 tablesEnd: where the records start
//	20  uint32 CRC-32 of the tables
//	24  key: SHA-256 of the config text
//	56  uint32 counts: validators, mappings, paths, commands, runs
//	76  context (what besides the text decides a parse), then the
//	    settings record's body
//	tables, one uint32 record offset per entry: validators sorted by
//	    name, mappings in file order, paths and commands sorted by key,
//	    and one record listing every run validator's name and command in
//	    file order (the tamper guard reads it on every write it judges)
//	records, each: uvarint length, body, uint32 CRC-32 of the body
//
// Integers in the head and tables are little-endian; in bodies strings
// are a uvarint length and bytes, numbers varints. Lookups binary-search a
// table.
const (
	indexMagic   = "SGIX"
	indexVersion = 7 // 7: exact-text key only, confine, and the names of nested commands, skills and plugins
	keySize      = sha256.Size

	offCRC       = 8
	offHeadEnd   = 12
	offTablesEnd = 16
	offTablesCRC = 20
	offKey       = 24
	offCounts    = offKey + keySize
	offContext   = offCounts + 5*4

	// maxRecord bounds a record's claimed length, so a corrupt one cannot
	// make a lookup allocate without limit.
	maxRecord = 1 << 24
)

// checksum is CRC-32 (IEEE): its table is cheap to set up, where
// CRC-32C's hardware tables take a tenth of a hook's start-up to build.
func checksum(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// errCorrupt is what every malformed encoding decodes to.
var errCorrupt = errors.New("malformed index")

// encode compiles cfg. context and key identify what it was compiled from.
func encode(cfg *Config, context string, key [keySize]byte) []byte {
	// Validators by name; each record keeps its position in file order.
	order := make(map[string]int, len(cfg.Order))
	for i, name := range cfg.Order {
		order[name] = i
	}
	names := slices.Clone(cfg.Order)
	sort.Strings(names)

	paths, commands := cfg.tables()
	pathKeys, commandKeys := slices.Sorted(maps.Keys(paths)), slices.Sorted(maps.Keys(commands))
	counts := []int{len(names), len(cfg.Mappings), len(pathKeys), len(commandKeys), 1}

	var tail writer
	tail.str(context)
	tail.settings(&cfg.Settings)
	headEnd := offContext + len(tail.b)
	tablesEnd := headEnd + 4*(counts[0]+counts[1]+counts[2]+counts[3]+counts[4])

	head := make([]byte, offContext, headEnd)
	copy(head, indexMagic)
	binary.LittleEndian.PutUint32(head[4:], indexVersion)
	binary.LittleEndian.PutUint32(head[offHeadEnd:], uint32(headEnd))
	binary.LittleEndian.PutUint32(head[offTablesEnd:], uint32(tablesEnd))
	copy(head[offKey:], key[:])
	for i, n := range counts {
		binary.LittleEndian.PutUint32(head[offCounts+4*i:], uint32(n))
	}
	head = append(head, tail.b...)

	tables := make([]byte, 0, tablesEnd-headEnd)
	var recs, body writer
	record := func(write func(w *writer)) {
		tables = binary.LittleEndian.AppendUint32(tables, uint32(tablesEnd+len(recs.b)))
		body.b = body.b[:0]
		write(&body)
		recs.uvarint(uint64(len(body.b)))
		recs.b = append(recs.b, body.b...)
		recs.b = binary.LittleEndian.AppendUint32(recs.b, checksum(body.b))
	}
	for _, name := range names {
		v := cfg.Validators[name]
		record(func(w *writer) { w.validator(v, order[name]) })
	}
	for i := range cfg.Mappings {
		m := &cfg.Mappings[i]
		record(func(w *writer) {
			w.uvarint(uint64(i))
			w.str(m.Prompt)
			w.uvarint(uint64(m.Line))
			w.strs(m.Validators)
		})
	}
	for _, t := range []struct {
		keys []string
		idx  map[string][]int
	}{{pathKeys, paths}, {commandKeys, commands}} {
		for _, k := range t.keys {
			record(func(w *writer) {
				w.str(k)
				w.uvarint(uint64(len(t.idx[k])))
				for _, i := range t.idx[k] {
					w.uvarint(uint64(i))
				}
			})
		}
	}
	record(func(w *writer) {
		var runs []*Validator
		for _, name := range cfg.Order {
			if v := cfg.Validators[name]; v.Run != "" {
				runs = append(runs, v)
			}
		}
		w.uvarint(uint64(len(runs)))
		for _, v := range runs {
			w.str(v.Name)
			w.str(v.Run)
		}
	})
	binary.LittleEndian.PutUint32(head[offTablesCRC:], checksum(tables))
	sealHead(head)
	out := make([]byte, 0, len(head)+len(tables)+len(recs.b))
	return append(append(append(out, head...), tables...), recs.b...)
}

// sealHead writes the checksum of head, the bytes up to headEnd.
func sealHead(head []byte) {
	binary.LittleEndian.PutUint32(head[offCRC:], checksum(head[offHeadEnd:]))
}

type writer struct{ b []byte }

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }

// strs writes a list with its length plus one, so that nil (0) and empty
// (1) stay apart: protect = [] means something else than no protect key.
func (w *writer) strs(ss []string) {
	if ss == nil {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(len(ss)) + 1)
	for _, s := range ss {
		w.str(s)
	}
}

func (w *writer) settings(s *Settings) {
	w.str(s.PromptsDir)
	w.str(s.StateDir)
	w.varint(int64(s.Timeout))
	w.varint(int64(s.MaxBlocks))
	w.varint(int64(s.OutputLines))
	if s.Announce {
		w.uvarint(1)
	} else {
		w.uvarint(0)
	}
	w.str(s.OnFailure)
	w.strs(s.Protect)
	w.str(s.Confine)
}

func (w *writer) validator(v *Validator, order int) {
	w.str(v.Name)
	w.uvarint(uint64(order))
	for _, s := range []string{v.File, v.Run, v.Contains, v.NotContains, v.Regex, v.Fix} {
		w.str(s)
	}
	w.varint(int64(v.Timeout))
	w.uvarint(uint64(v.Line))
}

// head is the checked head of an encoding.
type head struct {
	headEnd, tablesEnd                    int
	tablesCRC                             uint32
	context                               string
	key                                   [keySize]byte
	validators, mappings, paths, commands table
	runs                                  table // one record: the run validators
	settings                              Settings
}

// readHead reads and checks the head of the encoding in src.
func readHead(src io.ReaderAt) (*head, error) {
	b := make([]byte, 512) // the head of a usual config, in one read
	n, err := src.ReadAt(b, 0)
	if n < offContext || err != nil && err != io.EOF {
		return nil, errCorrupt
	}
	if string(b[:4]) != indexMagic || binary.LittleEndian.Uint32(b[4:]) != indexVersion {
		return nil, errCorrupt
	}
	h := &head{
		headEnd:   int(binary.LittleEndian.Uint32(b[offHeadEnd:])),
		tablesEnd: int(binary.LittleEndian.Uint32(b[offTablesEnd:])),
		tablesCRC: binary.LittleEndian.Uint32(b[offTablesCRC:]),
	}
	if h.headEnd < offContext || h.headEnd > maxRecord || h.tablesEnd < h.headEnd {
		return nil, errCorrupt
	}
	if h.headEnd > n {
		b = make([]byte, h.headEnd)
		if _, err := src.ReadAt(b, 0); err != nil {
			return nil, errCorrupt
		}
	}
	b = b[:h.headEnd]
	if binary.LittleEndian.Uint32(b[offCRC:]) != checksum(b[offHeadEnd:]) {
		return nil, errCorrupt
	}
	copy(h.key[:], b[offKey:])
	at := 0
	for i, t := range []*table{&h.validators, &h.mappings, &h.paths, &h.commands, &h.runs} {
		*t = table{at: at, n: int(binary.LittleEndian.Uint32(b[offCounts+4*i:]))}
		at += 4 * t.n
	}
	if at != h.tablesEnd-h.headEnd || h.runs.n != 1 {
		return nil, errCorrupt
	}
	r := reader{b: b[offContext:]}
	h.context = r.str()
	r.settings(&h.settings)
	if r.err != nil || len(r.b) != 0 {
		return nil, errCorrupt
	}
	return h, nil
}

// table is one array of record offsets among the tables.
type table struct {
	at, n int // byte offset of the array in the tables, number of entries
}

// readRecord reads and checks the body of the record at off.
func readRecord(src io.ReaderAt, off int64) ([]byte, error) {
	buf := make([]byte, 256)
	n, err := src.ReadAt(buf, off)
	if n == 0 {
		return nil, errCorrupt
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	buf = buf[:n]
	size, k := binary.Uvarint(buf)
	if k <= 0 || size > maxRecord {
		return nil, errCorrupt
	}
	total := k + int(size) + 4
	if total > len(buf) {
		buf = make([]byte, total)
		if _, err := src.ReadAt(buf, off); err != nil {
			return nil, errCorrupt
		}
	}
	body := buf[k : k+int(size)]
	if binary.LittleEndian.Uint32(buf[k+int(size):]) != checksum(body) {
		return nil, errCorrupt
	}
	return body, nil
}

// reader decodes a body with every read bounds-checked: a malformed body
// sets err, never panics.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() { r.err, r.b = errCorrupt, nil }

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// index reads a uvarint that must be below limit.
func (r *reader) index(limit int) int {
	v := r.uvarint()
	if v >= uint64(limit) {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) str() string { return string(r.bytes()) }

func (r *reader) strs() []string {
	n := r.uvarint()
	if n == 0 || r.err != nil {
		return nil
	}
	n--
	if n > uint64(len(r.b)) { // each string takes at least a byte
		r.fail()
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.str()
	}
	return ss
}

func (r *reader) settings(s *Settings) {
	s.PromptsDir = r.str()
	s.StateDir = r.str()
	s.Timeout = durationOf(r.varint())
	s.MaxBlocks = int(r.varint())
	s.OutputLines = int(r.varint())
	s.Announce = r.uvarint() == 1
	s.OnFailure = r.str()
	s.Protect = r.strs()
	s.Confine = r.str()
}

// validatorBody decodes a validator record after its name, which the
// table search has read.
func (r *reader) validatorBody(v *Validator) (order int) {
	order = int(r.uvarint())
	for _, p := range []*string{&v.File, &v.Run, &v.Contains, &v.NotContains, &v.Regex, &v.Fix} {
		*p = r.str()
	}
	v.Timeout = durationOf(r.varint())
	v.Line = int(r.uvarint())
	return order
}
