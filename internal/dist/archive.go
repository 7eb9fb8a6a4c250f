package dist

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"slices"
	"strings"
	"time"
)

// file is one member of an archive.
type file struct {
	name string // slash-separated, relative
	mode int64  // 0o755 for programs, 0o644 for the rest
	data []byte
}

// tarGz is a gzipped tar whose bytes depend on files and mtime alone
// (members sorted, owner 0:0, one mtime, no gzip name or time).
func tarGz(files []file, mtime time.Time) ([]byte, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
