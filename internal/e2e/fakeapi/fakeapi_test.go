package fakeapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// post sends body to the server's path and returns the response.
func post(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads a Server-Sent Events stream into its data payloads, checking that each
// event's name matches its payload's type.
func events(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var out []map[string]any
	var name string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var e map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
				t.Fatal(err)
			}
			if e["type"] != name {
				t.Errorf("event %q carries type %v", name, e["type"])
			}
			out = append(out, e)
		}
	}
	return out
}

const (
	firstTurn = `{"model":"m","stream":true,"tools":[{"name":"Read"}],
		"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=1;"}],
		"messages":[{"role":"user","content":[{"type":"text","text":"read a.md"}]},{"role":"system","content":"env"}]}`
	afterRead = `{"model":"m","stream":true,"tools":[{"name":"Read"}],
		"messages":[{"role":"user","content":"read a.md"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/p/a.md"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"A CONTENT"}]}]},
		{"role":"system","content":[{"type":"text","text":"trailing reminder"}]}]}`
)

func TestStreamsScriptedTurns(t *testing.T) {
	s := Start(t, Script{
		When(ResultOf("Read"), Text("done")),
		When(AtTurn(0), ToolUse("Read", map[string]any{"file_path": "/p/a.md"}), ToolUse("Read", map[string]any{"file_path": "/p/b.md"})),
	})

	got := events(t, post(t, s, "/v1/messages?beta=true", firstTurn))
	var types []string
	for _, e := range got {
		types = append(types, fmt.Sprint(e["type"]))
	}
	want := "message_start content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(types, " ") != want {
		t.Fatalf("events %v\nwant %s", types, want)
	}
	start := got[1]["content_block"].(map[string]any)
	if start["type"] != "tool_use" || start["name"] != "Read" || start["id"] == got[4]["content_block"].(map[string]any)["id"] {
		t.Errorf("tool_use blocks need distinct ids: %v, %v", start, got[4])
	}
	delta := got[2]["delta"].(map[string]any)
	if delta["type"] != "input_json_delta" || delta["partial_json"] != `{"file_path":"/p/a.md"}` {
		t.Errorf("delta %v", delta)
	}
	if sr := got[7]["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Errorf("stop_reason %v", sr)
	}

	got = events(t, post(t, s, "/v1/messages?beta=true", afterRead))
	if d := got[2]["delta"].(map[string]any); d["type"] != "text_delta" || d["text"] != "done" {
		t.Errorf("delta %v", d)
	}
	if sr := got[4]["delta"].(map[string]any)["stop_reason"]; sr != "end_turn" {
		t.Errorf("stop_reason %v", sr)
	}

	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	if r := reqs[0]; r.Path != "/v1/messages?beta=true" || r.System != "x-anthropic-billing-header: cc_version=1;" || r.FirstUser() != "read a.md\n" || r.Tools[0] != "Read" {
		t.Errorf("first request %+v", r)
	}
	if r := reqs[1]; !r.Contains("A CONTENT") || r.Assistants() != 1 || len(r.Latest()) != 2 || r.ToolResults()[0].ToolUseID != "t1" {
		t.Errorf("second request %+v", r)
	}
}

func TestSideRequestsBypassScript(t *testing.T) {
	s := Start(t, Script{}) // any scenario request would fail the test
	resp := post(t, s, "/v1/messages", `{"model":"haiku","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`)
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m["type"] != "message" || m["stop_reason"] != "end_turn" {
		t.Errorf("side answer %v", m)
	}
	if r := s.Requests(); len(r) != 1 || !r[0].Side {
		t.Errorf("side request not recorded as such: %+v", r)
	}
}

func TestOtherEndpoints(t *testing.T) {
	s := Start(t, Script{})
	if resp := post(t, s, "/v1/messages/count_tokens?beta=true", `{}`); resp.StatusCode != http.StatusOK {
		t.Errorf("count_tokens: %s", resp.Status)
	}
	for path, code := range map[string]int{"/v1/models": http.StatusOK, "/v1/unknown": http.StatusNotFound} {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("GET %s: %s, want %d", path, resp.Status, code)
		}
	}
	others := s.Others()
	sort.Strings(others)
	if got := strings.Join(others, ", "); got != "GET /v1/models, GET /v1/unknown, POST /v1/messages/count_tokens?beta=true" {
		t.Errorf("others: %s", got)
	}
}

// recorder is a testing.TB that keeps errors instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestUnansweredRequestFails(t *testing.T) {
	rec := &recorder{TB: t}
	s := Start(rec, Script{When(AtTurn(5), Text("never"))})
	events(t, post(t, s, "/v1/messages", firstTurn))
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "no turn answers") {
		t.Errorf("errors: %q", rec.errors)
	}
}

func TestMatchers(t *testing.T) {
	r, err := decodeRequest("/v1/messages", []byte(afterRead))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := decodeRequest("/v1/messages", []byte(`{"tools":[{"name":"Read"}],
		"system":[{"type":"text","text":"cc_version=1; cc_is_subagent=true;"}],
		"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"SUB task"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    Match
		r    *Request
		want bool
	}{
		{"AtTurn 1", AtTurn(1), r, true},
		{"AtTurn 0", AtTurn(0), r, false},
		{"ResultOf Read", ResultOf("Read"), r, true},
		{"ResultOf any", ResultOf(""), r, true},
		{"ResultOf Write", ResultOf("Write"), r, false},
		{"Has tool input", Has(`"file_path":"/p/a.md"`), r, true},
		{"LastHas old text", LastHas("read a.md"), r, false},
		{"LastHas trailing system", LastHas("trailing reminder"), r, true},
		{"Task", Task("read a.md"), r, true},
		{"Task subagent", Task("SUB task"), sub, true},
		{"Subagent", Subagent, sub, true},
		{"not Subagent", Subagent, r, false},
		{"All", All(AtTurn(1), Has("A CONTENT")), r, true},
		{"Not", Not(Always), r, false},
	} {
		if got := tc.m(tc.r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
