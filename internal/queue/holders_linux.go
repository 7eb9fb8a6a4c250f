package queue

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/stopgate/stopgate/internal/cli"
)

// Holders returns the processes holding a lock on path, from /proc/locks (nil: unknown); for messages only.
func Holders(path string) []Holder {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return nil
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	// "1: FLOCK ADVISORY WRITE 1234 08:01:5678 0 EOF": major:minor:inode.
	dev := uint64(st.Dev)
	want := fmt.Sprintf("%02x:%02x:%d", (dev>>8)&0xfff, (dev&0xff)|((dev>>12)&0xfff00), st.Ino)
	var hs []Holder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] == "->" || fs[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fs[4])
		if err != nil || pid <= 0 || slices.ContainsFunc(hs, func(h Holder) bool { return h.PID == pid }) {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)) // "" when unknown
		hs = append(hs, Holder{PID: pid, Command: cli.Clip(strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " "), 117, "...")})
	}
	return hs
}
