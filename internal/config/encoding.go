package config

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"maps"
	"slices"
)

// The compiled form of a config, as the index cache holds it. The head
// (fixed fields, context, settings) is read and checked first; the tables
// only when a lookup needs them, and records one at a time, each checked
// on its own, so that an event costs a few reads however large the config.
// The config text it was compiled from comes last: a load compares it with
// mappings.toml byte for byte before it trusts anything else.
//
//	0   magic "SGIX", uint32 format version
//	8   uint32 CRC-32 of the rest of the head (bytes 12 to headEnd)
//	12  uint32 headEnd: where the tables start
//	16  uint32 tablesEnd: where the records start
//	20  uint32 CRC-32 of the tables
//	24  uint32 textAt, uint32 textLen: where the config text is
//	32  key: SHA-256 of the config text
//	64  uint32 counts: validators, mappings, paths, commands, runs
//	84  context (what besides the text decides a parse), then the
//	    settings record's body
//	tables, one uint32 record offset per entry: validators sorted by
//	    name, mappings in file order, paths and commands sorted by key,
//	    and one record listing every run validator's name and command in
//	    file order (the tamper guard reads it on every write it judges)
//	records, each: uvarint length, body, uint32 CRC-32 of the body
//	the config text
//
// Integers in the head and tables are little-endian; in bodies strings
// are a uvarint length and bytes, numbers varints. Lookups binary-search a
// table.
const (
	indexMagic   = "SGIX"
	indexVersion = 9 // 9: settings.mode
	keySize      = sha256.Size

	offCRC       = 8
	offHeadEnd   = 12
	offTablesEnd = 16
	offTablesCRC = 20
	offTextAt    = 24
	offTextLen   = 28
	offKey       = 32
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

// encode compiles cfg, parsed from text, into the format above. context
// says what besides the text decided the parse (see contextKey); key is
// the text's SHA-256.
func encode(cfg *Config, text []byte, context string, key [keySize]byte) []byte {
	ix := sortedIndexOf(cfg)
	var tail writer
	tail.str(context)
	tail.settings(&cfg.Settings)
	headEnd := offContext + len(tail.b)
	tablesEnd := headEnd + 4*ix.entries()

	rw := recordWriter{base: tablesEnd}
	ix.writeRecords(&rw, cfg)
	at := sections{headEnd: headEnd, tablesEnd: tablesEnd, textAt: tablesEnd + len(rw.recs), textLen: len(text)}
	head := at.head(ix.counts(), key, checksum(rw.tables), tail.b)

	out := make([]byte, 0, at.textAt+at.textLen)
	out = append(append(out, head...), rw.tables...)
	return append(append(out, rw.recs...), text...)
}

// sections is where the parts of an encoding start and end.
type sections struct {
	headEnd, tablesEnd, textAt, textLen int
}

// head returns the encoding's head, sealed by its checksum: the fixed
// fields, then tail (the context and the settings).
func (s sections) head(counts [5]int, key [keySize]byte, tablesCRC uint32, tail []byte) []byte {
	h := make([]byte, offContext, s.headEnd)
	copy(h, indexMagic)
	put := func(off, v int) { binary.LittleEndian.PutUint32(h[off:], uint32(v)) }
	put(4, indexVersion)
	put(offHeadEnd, s.headEnd)
	put(offTablesEnd, s.tablesEnd)
	binary.LittleEndian.PutUint32(h[offTablesCRC:], tablesCRC)
	put(offTextAt, s.textAt)
	put(offTextLen, s.textLen)
	copy(h[offKey:], key[:])
	for i, n := range counts {
		put(offCounts+4*i, n)
	}
	h = append(h, tail...)
	binary.LittleEndian.PutUint32(h[offCRC:], checksum(h[offHeadEnd:]))
	return h
}

// sortedIndex is what the tables list, in their order.
type sortedIndex struct {
	names                 []string       // validator names, sorted
	order                 map[string]int // each validator's place in file order
	mappings              int
	paths, commands       map[string][]int
	pathKeys, commandKeys []string
}

func sortedIndexOf(cfg *Config) *sortedIndex {
	ix := &sortedIndex{
		names:    slices.Sorted(slices.Values(cfg.Order)),
		order:    make(map[string]int, len(cfg.Order)),
		mappings: len(cfg.Mappings),
	}
	for i, name := range cfg.Order {
		ix.order[name] = i
	}
	ix.paths, ix.commands = cfg.tables()
	ix.pathKeys, ix.commandKeys = slices.Sorted(maps.Keys(ix.paths)), slices.Sorted(maps.Keys(ix.commands))
	return ix
}

// counts are the tables' lengths, in the head's order.
func (ix *sortedIndex) counts() [5]int {
	return [5]int{len(ix.names), ix.mappings, len(ix.pathKeys), len(ix.commandKeys), 1}
}

func (ix *sortedIndex) entries() int {
	n := 0
	for _, c := range ix.counts() {
		n += c
	}
	return n
}

// writeRecords writes one record per table entry, in the tables' order.
func (ix *sortedIndex) writeRecords(rw *recordWriter, cfg *Config) {
	for _, name := range ix.names {
		rw.record(func(w *writer) { w.validator(cfg.Validators[name], ix.order[name]) })
	}
	for i := range cfg.Mappings {
		rw.record(func(w *writer) { w.mapping(i, &cfg.Mappings[i]) })
	}
	for _, k := range ix.pathKeys {
		rw.record(func(w *writer) { w.lookup(k, ix.paths[k]) })
	}
	for _, k := range ix.commandKeys {
		rw.record(func(w *writer) { w.lookup(k, ix.commands[k]) })
	}
	rw.record(func(w *writer) { w.runs(cfg) })
}

// recordWriter appends records, each with its entry in the tables.
type recordWriter struct {
	base   int    // where the first record starts in the encoding
	tables []byte // one uint32 offset per record
	recs   []byte
	body   writer // scratch
}

func (rw *recordWriter) record(write func(w *writer)) {
	rw.tables = binary.LittleEndian.AppendUint32(rw.tables, uint32(rw.base+len(rw.recs)))
	rw.body.b = rw.body.b[:0]
	write(&rw.body)
	rw.recs = binary.AppendUvarint(rw.recs, uint64(len(rw.body.b)))
	rw.recs = append(rw.recs, rw.body.b...)
	rw.recs = binary.LittleEndian.AppendUint32(rw.recs, checksum(rw.body.b))
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
	w.str(s.Mode)
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

func (w *writer) mapping(i int, m *Mapping) {
	w.uvarint(uint64(i))
	w.str(m.Prompt)
	w.uvarint(uint64(m.Line))
	w.strs(m.Validators)
}

// lookup writes a path's or a command's entry: the mappings it arms.
func (w *writer) lookup(key string, mappings []int) {
	w.str(key)
	w.uvarint(uint64(len(mappings)))
	for _, i := range mappings {
		w.uvarint(uint64(i))
	}
}

// runs writes every run validator's name and command, in file order.
func (w *writer) runs(cfg *Config) {
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
}

// head is the checked head of an encoding.
type head struct {
	headEnd, tablesEnd                    int
	tablesCRC                             uint32
	textAt, textLen                       int64
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
	h.textAt = int64(binary.LittleEndian.Uint32(b[offTextAt:]))
	h.textLen = int64(binary.LittleEndian.Uint32(b[offTextLen:]))
	if h.headEnd < offContext || h.headEnd > maxRecord || h.tablesEnd < h.headEnd || h.textAt < int64(h.tablesEnd) {
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
	s.Mode = r.str()
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
