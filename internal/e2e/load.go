package e2e

import (
	"os"
	"strconv"
	"strings"
)

// loadAverage returns the 1-minute load average (Linux /proc/loadavg), or 0 when it
// cannot be read.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	field, _, _ := strings.Cut(string(data), " ")
	load, err := strconv.ParseFloat(field, 64)
	if err != nil {
		return 0
	}
	return load
}
