package fakellm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// post sends body to the server's path and returns the data of each SSE event (or the
// whole body when it is not a stream), checking that a named event's name is its
// data's type.
func post(t *testing.T, s *Server, path, body string) []map[string]any {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	var out []map[string]any
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return []map[string]any{m}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			name = n
		}
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		if name != "" && m["type"] != name {
			t.Errorf("event %q carries type %v", name, m["type"])
		}
		out = append(out, m)
	}
	return out
}

func compact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var script = Script{
	When(LastHas("file content"), Text("Done.")),
	When(AtTurn(0), Tool("read_file", map[string]any{"file_path": "/p/a.md"})),
}

func TestGemini(t *testing.T) {
	s := Start(t, Gemini, script)
	ev := post(t, s, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"go"}]}],"tools":[{"functionDeclarations":[{"name":"read_file"}]}]}`)
	if len(ev) != 1 {
		t.Fatalf("%d events", len(ev))
	}
	want := `{"candidates":[{"content":{"parts":[{"functionCall":{"args":{"file_path":"/p/a.md"},"name":"read_file"}}],"role":"model"},"finishReason":"STOP","index":0}],"modelVersion":"gemini-2.5-flash","usageMetadata":{"candidatesTokenCount":1,"promptTokenCount":1,"totalTokenCount":2}}`
	if got := compact(t, ev[0]); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	ev = post(t, s, "/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"file content"}}}]}]}`)
	if got := compact(t, ev[0]["candidates"]); !strings.Contains(got, `"parts":[{"text":"Done."}]`) {
		t.Errorf("plain generateContent: %s", got)
	}
	r := s.Requests()[1]
	roles := []string{}
	for _, m := range r.Messages {
		roles = append(roles, m.Role)
	}
	if !reflect.DeepEqual(roles, []string{"user", "assistant", "tool"}) || r.Turns() != 1 || !reflect.DeepEqual(s.Requests()[0].Tools, []string{"read_file"}) {
		t.Errorf("decoded %v, turns %d", roles, r.Turns())
	}
}

func TestChat(t *testing.T) {
	s := Start(t, Chat, script)
	const first = `{"model":"fake-model","stream":true,"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"go"}]}],"tools":[{"type":"function","function":{"name":"read_file"}}]}`
	ev := post(t, s, "/v1/chat/completions", first)
	if len(ev) != 3 {
		t.Fatalf("%d events: %v", len(ev), ev)
	}
	call := compact(t, ev[1]["choices"])
	if !strings.Contains(call, `"tool_calls":[{"function":{"arguments":"{\"file_path\":\"/p/a.md\"}","name":"read_file"},"id":"call_fake_1_0","index":0,"type":"function"}]`) {
		t.Errorf("tool call chunk: %s", call)
	}
	if fin := compact(t, ev[2]["choices"]); !strings.Contains(fin, `"finish_reason":"tool_calls"`) {
		t.Errorf("finish chunk: %s", fin)
	}
	ev = post(t, s, "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"file content"}]}`)
	if got := compact(t, ev[1]["choices"]); !strings.Contains(got, `"content":"Done."`) || !strings.Contains(compact(t, ev[2]), `"finish_reason":"stop"`) {
		t.Errorf("text reply: %v", ev)
	}
	// A Turn's reply to another request gets fresh call ids.
	if call := compact(t, post(t, s, "/v1/chat/completions", first)[1]["choices"]); !strings.Contains(call, `"id":"call_fake_3_0"`) {
		t.Errorf("repeated reply: %s", call)
	}
}

func TestResponses(t *testing.T) {
	s := Start(t, Responses, script)
	ev := post(t, s, "/v1/responses", `{"model":"fake-model","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}],"tools":[{"type":"function","name":"read_file"}]}`)
	var types []string
	for _, e := range ev {
		types = append(types, e["type"].(string))
	}
	if want := []string{"response.created", "response.output_item.added", "response.output_item.done", "response.completed"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	if item := compact(t, ev[2]["item"]); item != `{"arguments":"{\"file_path\":\"/p/a.md\"}","call_id":"call_fake_1_0","id":"fc_call_fake_1_0","name":"read_file","status":"completed","type":"function_call"}` {
		t.Errorf("item %s", item)
	}
	ev = post(t, s, "/v1/responses", `{"stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},{"type":"function_call","name":"read_file","arguments":"{}","call_id":"c1"},{"type":"function_call_output","call_id":"c1","output":"file content"}]}`)
	if len(ev) != 5 || ev[2]["delta"] != "Done." {
		t.Errorf("text reply events: %v", ev)
	}
	if r := s.Requests()[1]; r.Turns() != 1 || r.Messages[2].Role != "tool" {
		t.Errorf("decoded %+v", r.Messages)
	}
}

// A side request asking for JSON gets a neutral object without a Turn.
func TestJSONSideRequest(t *testing.T) {
	s := Start(t, Gemini, Script{})
	ev := post(t, s, "/v1beta/models/gemini-2.5-flash-lite:generateContent", `{"contents":[{"role":"user","parts":[{"text":"classify"}]}],"generationConfig":{"responseMimeType":"application/json"}}`)
	if got := compact(t, ev[0]); !strings.Contains(got, `next_speaker`) {
		t.Errorf("got %s", got)
	}
}

// types lists the events' types.
func types(events []map[string]any) string {
	var out []string
	for _, e := range events {
		out = append(out, fmt.Sprint(e["type"]))
	}
	return strings.Join(out, " ")
}

const (
	firstTurn = `{"model":"m","stream":true,"tools":[{"name":"Read"}],
		"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=1;"}],
		"messages":[{"role":"user","content":[{"type":"text","text":"read a.md"}]},{"role":"system","content":"env"}]}`
	afterRead = `{"model":"m","stream":true,"tools":[{"name":"Read"}],
		"messages":[{"role":"user","content":"read a.md"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/p/a.md"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"A CONTENT"}]}]},
		{"role":"system","content":[{"type":"text","text":"trailing reminder"}]}]}`
)

func TestAnthropic(t *testing.T) {
	s := Start(t, Anthropic, Script{
		When(ResultOf("Read"), Text("done")),
		When(AtTurn(0), Tool("Read", map[string]any{"file_path": "/p/a.md"}), Tool("Read", nil)),
	})
	got := post(t, s, "/v1/messages?beta=true", firstTurn)
	want := "message_start content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if types(got) != want {
		t.Fatalf("events %s\nwant %s", types(got), want)
	}
	start := got[1]["content_block"].(map[string]any)
	if start["type"] != "tool_use" || start["name"] != "Read" || start["id"] == got[4]["content_block"].(map[string]any)["id"] {
		t.Errorf("tool_use blocks need distinct ids: %v, %v", start, got[4])
	}
	if delta := got[2]["delta"].(map[string]any); delta["type"] != "input_json_delta" || delta["partial_json"] != `{"file_path":"/p/a.md"}` {
		t.Errorf("delta %v", delta)
	}
	if delta := got[5]["delta"].(map[string]any); delta["partial_json"] != `{}` {
		t.Errorf("a call without input streams %v", delta)
	}
	if sr := got[7]["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Errorf("stop_reason %v", sr)
	}

	got = post(t, s, "/v1/messages?beta=true", afterRead)
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
	if r := reqs[0]; r.System != "x-anthropic-billing-header: cc_version=1;" || r.Messages[0].Text != "read a.md" || r.Tools[0] != "Read" || r.Side {
		t.Errorf("first request %+v", r)
	}
	roles := []string{}
	for _, m := range reqs[1].Messages {
		roles = append(roles, m.Role)
	}
	if r := reqs[1]; !reflect.DeepEqual(roles, []string{"user", "assistant", "tool", "system"}) || r.Turns() != 1 ||
		r.Latest() != "A CONTENT\ntrailing reminder\n" || !r.Messages[2].IsError || !r.Has(`"file_path":"/p/a.md"`) {
		t.Errorf("second request %v: %+v", roles, r)
	}
}

// A Claude Code side request (no tools offered) gets an answer without a Turn, not
// streamed when it asked for no stream.
func TestAnthropicSideRequest(t *testing.T) {
	s := Start(t, Anthropic, Script{}) // any scenario request would fail the test
	m := post(t, s, "/v1/messages", `{"model":"haiku","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`)[0]
	if m["type"] != "message" || m["stop_reason"] != "end_turn" || m["model"] != "haiku" {
		t.Errorf("side answer %v", m)
	}
	if r := s.Requests(); len(r) != 1 || !r[0].Side {
		t.Errorf("side request not recorded as such: %+v", r)
	}
}

func TestOtherEndpoints(t *testing.T) {
	s := Start(t, Anthropic, Script{})
	if resp := post(t, s, "/v1/messages/count_tokens?beta=true", `{}`); resp[0]["input_tokens"] != 1.0 {
		t.Errorf("count_tokens: %v", resp)
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
	if len(s.Requests()) != 0 {
		t.Errorf("model requests: %v", s.Requests())
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
	s := Start(rec, Anthropic, Script{When(AtTurn(5), Text("never"))})
	post(t, s, "/v1/messages", firstTurn)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "no turn answers") {
		t.Errorf("errors: %q", rec.errors)
	}
}

func TestMatchers(t *testing.T) {
	r, err := decodeAnthropic([]byte(afterRead))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := decodeAnthropic([]byte(`{"tools":[{"name":"Read"}],
		"system":[{"type":"text","text":"cc_version=1; cc_is_subagent=true;"}],
		"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"SUB task"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	later := *r
	later.Messages = append(slices.Clone(r.Messages), Message{Role: "assistant", Text: "ok"}, Message{Role: "user", Text: "more"})
	gemini, err := decodeGemini([]byte(`{"contents":[{"role":"user","parts":[{"text":"go"}]},
		{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"x"}}}]}]}`))
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
		{"ResultOf Write", ResultOf("Write"), r, false},
		{"ResultOf before the last turn", ResultOf("Read"), &later, false},
		{"ResultOf by name (Gemini)", ResultOf("read_file"), gemini, true},
		{"LastHas old text", LastHas("read a.md"), r, false},
		{"LastHas tool result", LastHas("A CONTENT"), r, true},
		{"LastHas trailing system", LastHas("trailing reminder"), r, true},
		{"LastHas first request", LastHas("SUB task"), sub, true},
		{"Subagent", Subagent, sub, true},
		{"not Subagent", Subagent, r, false},
		{"All", All(AtTurn(1), LastHas("A CONTENT")), r, true},
		{"All but one", All(AtTurn(1), Subagent), r, false},
		{"Always", Always, sub, true},
	} {
		if got := tc.m(tc.r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
