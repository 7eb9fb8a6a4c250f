package bench

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine describes where the numbers were measured: CPU, cores, kernel,
// Go, the file system of dir, and the load average (a shared machine's
// numbers are only comparable within one run).
func Machine(dir string) string {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := runtime.GOOS
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel += " " + strings.TrimSpace(string(data))
	}
	return fmt.Sprintf("%s, %d CPUs, %s, %s, %s on %s, load average %s",
		cpu, runtime.NumCPU(), kernel, runtime.Version(), dir, fsType(dir), Load())
}

// Load returns the 1, 5 and 15 minute load averages, or "unknown".
func Load() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
