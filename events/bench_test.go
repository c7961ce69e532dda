package events

import (
	"encoding/json"
	"testing"
)

var benchLine = []byte(`{"schemaVersion":1,"id":"evt_0000002a-0000-4000-8000-5d2e1f0a9b3c","ts":"2026-01-01T00:01:03.000Z","sessionId":"sess-0","role":"relay-baton","kind":"agent_run","text":"plan the change run the tests review the diff fix the parser update README add a flag handle empty input","refs":{"plan":"plan.md"},"meta":{"agent":"claude","exitCode":1}}`)

// BenchmarkDecodeEvent compares the hand-written decoder with encoding/json
// on a typical line.
func BenchmarkDecodeEvent(b *testing.B) {
	b.Run("DecodeEvent", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchLine)))
		var e Event
		for b.Loop() {
			if err := DecodeEvent(benchLine, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchLine)))
		for b.Loop() {
			var e Event
			if err := json.Unmarshal(benchLine, &e); err != nil || e.Validate() != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendJSON(b *testing.B) {
	var e Event
	if err := DecodeEvent(benchLine, &e); err != nil {
		b.Fatal(err)
	}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = AppendJSON(buf[:0], e)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(e); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkValidate(b *testing.B) {
	var e Event
	DecodeEvent(benchLine, &e)
	for b.Loop() {
		if e.Validate() != nil {
			b.Fatal()
		}
	}
}

// BenchmarkAppend measures one Append (flock, last-byte check, one write).
func BenchmarkAppend(b *testing.B) {
	l, err := OpenLog(b.TempDir() + "/conversation.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	e := New("s1", RoleCodex, KindExecute, "Done: 3 files changed, go test ./... passes.")
	e.Meta = MetaJSON(`{"agent":"codex","exitCode":0}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}
