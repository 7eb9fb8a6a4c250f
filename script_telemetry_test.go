package stopgate_test

import (
	"net"

	"github.com/rogpeppe/go-internal/testscript"
)

// blackhole VAR listens on a loopback port that accepts connections and
// never answers, for the rest of the script, and sets VAR to its
// http:// URL: a collector that hangs.
func cmdBlackhole(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: blackhole VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // read nothing, answer nothing
		}
	}()
	ts.Defer(func() {
		l.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	ts.Setenv(args[0], "http://"+l.Addr().String())
}
