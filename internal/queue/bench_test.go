package queue

import (
	"fmt"
	"testing"
)

// Benchmarks of the queue's operations, each a real locked, fsynced write
// or read of the state dir (docs/benchmarks.md); their cost is the file
// system's. benchstat-friendly: go test -bench . -count 10 ./internal/queue.

func benchQueue(b *testing.B) *Queue {
	b.Helper()
	q := Open(b.TempDir())
	return q
}

func benchEntry(session string, i int) Entry {
	return Entry{Session: session, Prompt: fmt.Sprintf("p/%05d", i), Path: "/project/src/prompts/p.md", Trigger: TriggerRead}
}

// BenchmarkEnqueue arms a new entry (a first read) or re-arms a pending one.
func BenchmarkEnqueue(b *testing.B) {
	b.Run("entry=new", func(b *testing.B) {
		q := benchQueue(b)
		i := 0
		for b.Loop() {
			if _, err := q.Enqueue(benchEntry("s", i), nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("entry=rearm", func(b *testing.B) {
		q := benchQueue(b)
		for b.Loop() {
			if _, err := q.Enqueue(benchEntry("s", 0), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSnapshot reads a scope's pending entries, as every stop does.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{0, 1, 16, 64} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			q := benchQueue(b)
			for i := range n {
				if _, err := q.Enqueue(benchEntry("s", i), nil); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				entries, _, err := q.Snapshot(Scope{Session: "s"})
				if err != nil || len(entries) != n {
					b.Fatalf("snapshot: %d entries, %v", len(entries), err)
				}
			}
		})
	}
}

// BenchmarkDrain is a passing stop's queue work: snapshot the scope, then
// remove what was judged. Arming the entries again is not timed.
func BenchmarkDrain(b *testing.B) {
	for _, n := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			q := benchQueue(b)
			s := Scope{Session: "s"}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for j := range n {
					if _, err := q.Enqueue(benchEntry("s", j), nil); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				entries, _, err := q.Snapshot(s)
				if err != nil || len(entries) != n {
					b.Fatalf("snapshot: %d entries, %v", len(entries), err)
				}
				if err := q.Remove(s, entries); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
