package validator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// maxRequest bounds the runner's input: specs, not data.
const maxRequest = 64 << 20

// Serve is the runner inside a stop's sandbox (sandbox.go): it reads the
// request on stdin, runs its specs at once and reports each on stdout as
// it ends. Started by anything but the gate, it is a program that runs
// the commands it is given, which the caller could run itself.
func Serve(stdin io.Reader, stdout io.Writer) error {
	// Before any validator starts: none may open our stdout through
	// /proc/PID/fd or trace us.
	hideSelf()
	var req boxRequest
	if err := json.NewDecoder(io.LimitReader(stdin, maxRequest)).Decode(&req); err != nil {
		return fmt.Errorf("reading the sandbox's request: %w", err)
	}
	// To its end: nothing of it is left in the pipe, which bwrap holds
	// too, when the validators start.
	io.Copy(io.Discard, stdin)
	out := &reporter{enc: json.NewEncoder(stdout), nonce: req.Nonce}
	if err := out.send(boxLine{Hello: true}); err != nil {
		return err
	}
	ctx, ff := failFast(context.Background(), req.Env.FailFast)
	defer ff.cancel(nil)
	each(len(req.Specs), func(i int) {
		s := req.Specs[i]
		r := ff.saw(runOne(ctx, req.Env, Spec{Run: s.Run, Env: s.Env, Timeout: s.Timeout}, nil))
		line := boxLine{I: i, Output: []byte(r.Output), Result: r}
		line.Result.Output = ""
		out.send(line)
	})
	return out.send(boxLine{End: true})
}

// reporter writes the runner's lines, one whole line at a time.
type reporter struct {
	mu    sync.Mutex
	enc   *json.Encoder
	nonce string
	err   error
}

func (r *reporter) send(l boxLine) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		l.Nonce = r.nonce
		r.err = r.enc.Encode(l)
	}
	return r.err
}
