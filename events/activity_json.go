package events

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"
)

// AppendActivityJSON appends a as json.Marshal encodes it (keys in struct
// order, empty fields left out, <, > and & escaped as \u003c, \u003e,
// \u0026) with EscapeJSON applied, byte for byte, without reflection: the fast path of
// `tail --json` over big transcripts. It fails where json.Marshal fails (a
// time outside years 0-9999), leaving dst as it was. Activities with usage
// go through encoding/json.
func AppendActivityJSON(dst []byte, a Activity) ([]byte, error) {
	if a.Usage != nil {
		b, err := json.Marshal(a)
		if err != nil {
			return dst, err
		}
		return append(dst, EscapeJSON(b)...), nil
	}
	var stamp []byte
	if !a.Time.IsZero() {
		var err error
		if stamp, err = a.Time.MarshalJSON(); err != nil {
			return dst, &json.MarshalerError{Type: reflect.TypeFor[time.Time](), Err: err}
		}
	}
	dst = append(dst, `{"source":`...)
	dst = appendHTMLString(dst, a.Source)
	dst = append(dst, `,"kind":`...)
	dst = appendHTMLString(dst, string(a.Kind))
	field := func(name, v string) {
		if v != "" {
			dst = append(dst, name...)
			dst = appendHTMLString(dst, v)
		}
	}
	field(`,"text":`, a.Text)
	field(`,"tool":`, a.Tool)
	field(`,"detail":`, a.Detail)
	if a.ExitCode != nil {
		dst = append(dst, `,"exitCode":`...)
		dst = strconv.AppendInt(dst, int64(*a.ExitCode), 10)
	}
	if a.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	field(`,"stopReason":`, a.StopReason)
	field(`,"id":`, a.ID)
	field(`,"session":`, a.Session)
	if stamp != nil {
		dst = append(dst, `,"time":`...)
		dst = append(dst, stamp...)
	}
	return append(dst, '}'), nil
}

// appendHTMLString appends s quoted as encoding/json does with HTML
// escaping (json.Marshal, json.Encoder's default).
func appendHTMLString(dst []byte, s string) []byte { return appendJSONString(dst, s, true) }
