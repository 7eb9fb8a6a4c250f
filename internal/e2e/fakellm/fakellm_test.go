package fakellm

import (
	"bufio"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// post sends body to the server's path and returns the data of each SSE event (or the
// whole body when it is not a stream).
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
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %q: %v", data, err)
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
	When(func(r *Request) bool { return strings.Contains(r.Latest(), "file content") }, Text("Done.")),
	When(func(r *Request) bool { return r.Turns() == 0 }, Tool("read_file", map[string]any{"file_path": "/p/a.md"})),
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
	ev := post(t, s, "/v1/chat/completions", `{"model":"fake-model","stream":true,"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"go"}]}],"tools":[{"type":"function","function":{"name":"read_file"}}]}`)
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
