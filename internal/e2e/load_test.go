package e2e

import (
	"runtime"
	"testing"
)

func TestLoadFactor(t *testing.T) {
	cpus := float64(runtime.NumCPU())
	for _, tt := range []struct{ load, want float64 }{
		{0, 1},              // unknown: no scaling
		{cpus / 2, 1},       // idle
		{cpus, 1},           // busy, not overloaded
		{3 * cpus, 3},       // three runnable processes per CPU
		{10.5 * cpus, 10.5}, // a machine shared by many builds
	} {
		if got := loadFactor(tt.load); got != tt.want {
			t.Errorf("loadFactor(%v) = %v, want %v", tt.load, got, tt.want)
		}
	}
}
