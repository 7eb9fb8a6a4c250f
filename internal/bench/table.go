package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Table is a Markdown table with aligned columns, readable as plain text.
type Table struct {
	Header []string
	Right  []bool // columns aligned right (numbers)
	Rows   [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// Write prints the table.
func (t *Table) Write(w io.Writer) error {
	width := make([]int, len(t.Header))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range row {
			if i < len(width) {
				width[i] = max(width[i], len([]rune(c)))
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for i := range width {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i < len(t.Right) && t.Right[i] {
				b.WriteString(" " + pad + c + " |")
			} else {
				b.WriteString(" " + c + pad + " |")
			}
		}
		b.WriteString("\n")
	}
	line(t.Header)
	b.WriteString("|")
	for i, n := range width {
		if i < len(t.Right) && t.Right[i] {
			b.WriteString(" " + strings.Repeat("-", max(n-1, 2)) + ": |")
		} else {
			b.WriteString(" " + strings.Repeat("-", max(n, 3)) + " |")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		line(row)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Ms formats d in milliseconds.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// Ratio formats a/b as "1.23×".
func Ratio(a, b time.Duration) string {
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}
