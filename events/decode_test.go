package events

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var decodeOK = []string{
	`{"schemaVersion":1,"id":"evt_1","ts":"2026-05-29T10:00:00.000Z","sessionId":"s","role":"user","kind":"message","text":"hi"}`,
	` { "schemaVersion" : 1 , "id" : "evt_1" , "ts" : "2026-05-29T10:00:00Z" , "role" : "claude" , "kind" : "plan" , "text" : "" } `,
	`{"id":"evt_2","ts":"2026-05-29T10:00:00.123456+02:00","role":"codex","kind":"execute","text":"esc \" \\ \/ \n \t \u00e9 \ud83d\ude00 <&>","refs":{"plan":"plan.md","k\"ey":"v"},"meta":{"agent":"claude","exitCode":0,"cost":1.5e-7,"big":1e300,"neg":-12,"ok":true,"no":false,"nil":null,"list":[1,"two",[3],{"x":{}}],"obj":{"a":[]}}}`,
	`{"id":"evt_3","ts":"2026-05-29T10:00:00Z","role":"future-role","kind":"future_kind","text":"ünïcødé 日本","unknown":{"deep":[1,2,{"a":null}]},"alsoUnknown":-0.5e+3}`,
	`{"id":"evt_4","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","text":null,"refs":null,"meta":null,"sessionId":null,"schemaVersion":null}`,
	`{"id":"evt_5","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","refs":{},"meta":{}}`,
	`{"id":"evt_6","id":"evt_dup","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message"}`,
}

var decodeBad = []string{
	``,
	`null`,
	`[]`,
	`"x"`,
	`{"hello":"world"}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message"} trailing`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message"`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message",}`,
	`{"id":"evt_1","ts":"not a time","role":"user","kind":"message"}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user"}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","schemaVersion":1.5}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","refs":{"a":1}}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","meta":[1]}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","meta":{"n":01}}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","meta":{"n":1e999}}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","text":"bad \x escape"}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","text":"raw` + "\x01" + `control"}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","text":"` + "\xff" + `"}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","x":tru}`,
	`{"id":"evt_1","ts":"2026-05-29T10:00:00Z","role":"user","kind":"message","x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`,
	`{id:"evt_1"}`,
}

func TestDecodeEventMatchesEncodingJSON(t *testing.T) {
	for _, line := range decodeOK {
		var got, want Event
		if err := DecodeEvent([]byte(line), &got); err != nil {
			t.Errorf("DecodeEvent(%s): %v", line, err)
			continue
		}
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatalf("encoding/json rejects test line %s: %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeEvent(%s)\n got %#v\nwant %#v", line, got, want)
		}
	}
}

func TestDecodeEventRejects(t *testing.T) {
	for _, line := range decodeBad {
		var e Event
		if err := DecodeEvent([]byte(line), &e); err == nil {
			t.Errorf("DecodeEvent(%.80s) accepted it: %+v", line, e)
		}
	}
}

func TestAppendJSONMatchesMarshal(t *testing.T) {
	for _, line := range decodeOK {
		var e Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(e)
		got := AppendJSON(nil, e)
		// json.Marshal escapes <, > and &; AppendJSON does not. Compare decoded.
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("AppendJSON produced invalid JSON %s: %v", got, err)
		}
		json.Unmarshal(want, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("AppendJSON\n got %s\nwant %s", got, want)
		}
		if !strings.Contains(line, "<&>") && string(got) != string(want) {
			t.Errorf("AppendJSON bytes differ\n got %s\nwant %s", got, want)
		}
	}
	// Control characters, invalid UTF-8 and line separators.
	e := New("s", RoleUser, KindMessage, "a\x00b\x1f\u2028\u2029\xffc\r")
	got := AppendJSON(nil, e)
	want, _ := json.Marshal(e)
	if string(got) != string(want) {
		t.Errorf("AppendJSON\n got %s\nwant %s", got, want)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range append(decodeOK, decodeBad...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var e Event
		if err := DecodeEvent(line, &e); err != nil {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("DecodeEvent accepted invalid JSON %q", line)
		}
		// What we accept round-trips through our encoder.
		var back Event
		if err := DecodeEvent(AppendJSON(nil, e), &back); err != nil {
			t.Fatalf("round trip of %q: %v", line, err)
		}
		if len(e.Refs) == 0 {
			e.Refs = nil // omitted when empty, as json.Marshal does
		}
		// A meta copied as it is reads as the re-encoded one would.
		if canonicalMeta(e.Meta) && !bytes.Equal(appendMeta(nil, e.Meta), appendMetaSorted(nil, e.Meta)) {
			t.Fatalf("meta %s copied, re-encoded as %s", e.Meta, appendMetaSorted(nil, e.Meta))
		}
		// The meta is written as encoding/json writes what it decodes to.
		var meta, backMeta any
		json.Unmarshal(e.Meta, &meta)
		json.Unmarshal(back.Meta, &backMeta)
		if !reflect.DeepEqual(meta, backMeta) {
			t.Fatalf("round trip of %q: meta %s, want %s", line, back.Meta, e.Meta)
		}
		e.Meta, back.Meta = nil, nil
		if !reflect.DeepEqual(e, back) {
			t.Fatalf("round trip of %q\n got %#v\nwant %#v", line, back, e)
		}
	})
}

// TestAppendJSONControlChars: control characters are written as
// encoding/json writes them (\b and \f short forms since Go 1.22).
func TestAppendJSONControlChars(t *testing.T) {
	e := New("s", RoleUser, KindMessage, "a\bb\fc\x01d\te\u2028<&>")
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		t.Fatal(err)
	}
	got := append(AppendJSON(nil, e), '\n')
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("AppendJSON:\n got %s\nwant %s", got, want.Bytes())
	}
}

// The metas relay-baton writes are copied as they are by AppendJSON, and
// are what re-encoding them would give.
func TestAppendMetaCopiesCanonical(t *testing.T) {
	copied := 0
	for _, k := range Kinds {
		e := NewWithMeta("s", RoleRelayBaton, "text", fullMeta(reflect.TypeOf(MetaTypes[k])))
		if canonicalMeta(e.Meta) {
			copied++
		}
		if got, want := appendMeta(nil, e.Meta), appendMetaSorted(nil, e.Meta); !bytes.Equal(got, want) {
			t.Errorf("%s: appendMeta %s, want %s", k, got, want)
		}
	}
	for _, m := range []string{`{"a":1,"a":2}`, `{"b":1,"a":2}`, `{"a":1.50}`, `{"a":1e3}`, `{"a":"\u00e9"}`, `{"a":"\u007f"}`, `{ "a":1}`, `{"a":[1]}`, `{"a":12345678901234567890}`} {
		if canonicalMeta(MetaJSON(m)) {
			t.Errorf("%s taken as written as it is", m)
		}
	}
	if copied < len(Kinds)/2 {
		t.Errorf("only %d of %d full metas copied as they are", copied, len(Kinds))
	}
}
