package fakeapi

// isSide reports whether r is one of the client's own side requests rather than a turn
// of an agent thread. Agent threads (main and subagents) are always offered tools.
func isSide(r *Request) bool {
	return len(r.Tools) == 0
}

// sideReply answers a side request harmlessly. None was seen from 2.1.328 in -p mode
// with nonessential traffic off; this keeps one from consuming a scenario's turns.
func sideReply() []Block { return []Block{Text("ok")} }
