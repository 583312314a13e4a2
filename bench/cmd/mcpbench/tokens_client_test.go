package main

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestAnswerOfEventStream(t *testing.T) {
	body := "id: s1-0\nretry: 1000\ndata: \n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"wrong\":true}}\n\n" +
		"event: message\nid: s1-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\n" +
		"data: \"result\":{\"tools\":[]}}\n\n"
	m, err := answerOf([]byte(body), "text/event-stream", 7)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Result) != `{"tools":[]}` {
		t.Fatalf("result = %s", m.Result)
	}
	if _, err := answerOf([]byte(body), "text/event-stream", 8); err == nil {
		t.Fatal("an answer to a request that has none")
	}
	m, err = answerOf([]byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}`), "application/json", 3)
	if err != nil || m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("JSON answer: %+v, %v", m, err)
	}
}

func TestFoundNames(t *testing.T) {
	res := json.RawMessage(`{"content":[{"type":"text","text":"…"}],"structuredContent":{"tools":[{"name":"fs__read_file","inputSchema":{}},{"name":"fs__list_directory"}]}}`)
	if got := foundNames(res); !slices.Equal(got, []string{"fs__read_file", "fs__list_directory"}) {
		t.Fatalf("foundNames = %v", got)
	}
	if got := foundNames(json.RawMessage(`{"content":[]}`)); len(got) != 0 {
		t.Fatalf("foundNames without structuredContent = %v", got)
	}
}
