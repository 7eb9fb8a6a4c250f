package e2e

import (
	"os"
	"runtime"
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

// loadFactor is how much slower than on an idle machine a process may run when load
// processes want the machine's CPUs: at least 1, else load per CPU. The hook budget is
// a claim about stopgate, not about what else the machine is doing (other test
// packages, other people's builds), so it is scaled by this and the scaling is logged.
func loadFactor(load float64) float64 {
	f := load / float64(runtime.NumCPU())
	if f < 1 {
		return 1
	}
	return f
}
