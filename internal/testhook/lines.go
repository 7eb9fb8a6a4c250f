package testhook

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Neither decoder reports where a value sits, so problems are located with
// a light second look at the text: the line each test starts on (a TOML
// file's by config.TableLines, the scan that locates mappings.toml's keys).

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int) int {
	return bytes.Count(data[:min(off, len(data))], []byte("\n")) + 1
}

// jsonTestLines returns the line of each element of the top-level "tests"
// array, walking the tokens; nil when the text is not as expected.
func jsonTestLines(data []byte) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		var skip json.RawMessage
		if t != "tests" {
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil
		}
		var lines []int
		for dec.More() {
			off := int(dec.InputOffset())
			if dec.Decode(&skip) != nil {
				return lines
			}
			// The offset lies before the separator and blanks.
			for off < len(data) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
				off++
			}
			lines = append(lines, lineAt(data, off))
		}
		return lines
	}
	return nil
}
