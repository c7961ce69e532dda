package events

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// DecodeEvent parses one line of conversation.jsonl into e and validates it.
//
// It is a hand-written decoder for the Event object: replay reads a million
// lines in well under a second with it, where encoding/json into a struct
// with a map field takes several. It accepts exactly what encoding/json
// would (one JSON object, unknown keys ignored, null leaves a field empty),
// except that keys match case-sensitively and the line must be valid UTF-8.
func DecodeEvent(line []byte, e *Event) error {
	if !utf8.Valid(line) {
		return errors.New("line is not valid UTF-8")
	}
	*e = Event{}
	// One string holds the whole line; fields without escapes are slices
	// of it, so an event costs one allocation for all its strings.
	d := decoder{b: line, s: string(line)}
	if err := d.event(e); err != nil {
		return err
	}
	return e.Validate()
}

var errSyntax = errors.New("not valid JSON")

type decoder struct {
	b     []byte
	s     string // the same bytes as b
	i     int
	depth int
	start int // where the last string read began
}

func (d *decoder) ws() { d.i = JSONSpace(d.b, d.i) }

func (d *decoder) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *decoder) expect(c byte) error {
	d.ws()
	if d.peek() != c {
		return fmt.Errorf("%w: want %q at byte %d", errSyntax, c, d.i)
	}
	d.i++
	return nil
}

// literal consumes true, false or null.
func (d *decoder) literal(word string) bool {
	if end := JSONLiteral(d.b, d.i, word); end >= 0 {
		d.i = end
		return true
	}
	return false
}

// event parses the top-level object into e. A key with escapes matches no
// field.
func (d *decoder) event(e *Event) error {
	d.ws()
	if d.peek() != '{' {
		return errors.New("not a JSON object")
	}
	err := d.members(true, func(key string, escaped bool) error {
		if escaped {
			key = ""
		}
		return d.field(e, key)
	})
	if err != nil {
		return err
	}
	d.ws()
	if d.i != len(d.b) {
		return fmt.Errorf("%w: trailing data at byte %d", errSyntax, d.i)
	}
	return nil
}

func (d *decoder) field(e *Event, key string) error {
	var err error
	switch key {
	case "schemaVersion":
		if d.literal("null") {
			return nil
		}
		num, _, err := d.number()
		if err != nil {
			return err
		}
		n, perr := strconv.Atoi(string(num))
		if perr != nil {
			return fmt.Errorf("schemaVersion %s is not an integer", num)
		}
		e.SchemaVersion = n
	case "id":
		err = d.stringField(&e.ID)
	case "ts":
		err = d.stringField(&e.TS)
	case "sessionId":
		err = d.stringField(&e.SessionID)
	case "role":
		var s string
		err = d.stringField(&s)
		e.Role = Role(s)
	case "kind":
		var s string
		err = d.stringField(&s)
		e.Kind = Kind(s)
	case "text":
		err = d.stringField(&e.Text)
	case "refs":
		err = d.refs(e)
	case "meta":
		if d.literal("null") {
			e.Meta = nil
			return nil
		}
		if d.peek() != '{' {
			return errors.New("meta is not an object")
		}
		start := d.i
		if _, err = d.value(false); err == nil {
			e.Meta = nil // an empty object: no meta
			if !emptyObject(d.b[:d.i], start) {
				e.Meta = append(MetaJSON(nil), d.b[start:d.i]...)
			}
		}
	default:
		_, err = d.value(false)
	}
	return err
}

// stringField reads a string (or null, which leaves *dst alone) into dst.
// Roles and kinds are interned so that a million events share their strings.
func (d *decoder) stringField(dst *string) error {
	if d.literal("null") {
		return nil
	}
	s, err := d.str()
	if err == nil {
		*dst = s
	}
	return err
}

// str reads a string value (not null).
func (d *decoder) str() (string, error) {
	raw, err := d.rawString()
	if err != nil {
		return "", err
	}
	if raw == nil { // had escapes: decode them
		return JSONUnquote(d.b[d.start+1 : d.i-1]), nil
	}
	return d.s[d.start+1 : d.i-1], nil
}

// rawString consumes a JSON string. It returns its bytes when the string
// has no escapes; nil when it has some (d.start is where it began).
func (d *decoder) rawString() ([]byte, error) {
	if d.peek() != '"' {
		return nil, fmt.Errorf("%w: want a string at byte %d", errSyntax, d.i)
	}
	end, escaped := scanString(d.b, d.i)
	if end < 0 {
		return nil, fmt.Errorf("%w: bad string at byte %d", errSyntax, d.i)
	}
	d.start, d.i = d.i, end
	if escaped {
		return nil, nil
	}
	return d.b[d.start+1 : end-1], nil
}

func (d *decoder) refs(e *Event) error {
	if d.literal("null") {
		e.Refs = nil
		return nil
	}
	if d.peek() != '{' {
		return errors.New("refs is not an object")
	}
	m := map[string]string{}
	e.Refs = m
	return d.members(true, func(k string, _ bool) error {
		var v string
		if d.peek() != '"' && !d.literal("null") {
			return fmt.Errorf("refs[%q] is not a string", k)
		}
		if d.peek() == '"' {
			if err := d.stringField(&v); err != nil {
				return err
			}
		}
		m[k] = v
		return nil
	})
}

const maxDepth = 1000

// value parses any JSON value, into the types encoding/json uses for any
// when build is set, else only validating it.
func (d *decoder) value(build bool) (any, error) {
	switch c := d.peek(); {
	case c == '"':
		if !build {
			_, err := d.rawString()
			return nil, err
		}
		return d.str()
	case c == '{' || c == '[':
		if d.depth++; d.depth > maxDepth {
			return nil, errors.New("JSON nested too deeply")
		}
		var v any
		var err error
		if c == '{' {
			v, err = d.object(build)
		} else {
			v, err = d.array(build)
		}
		d.depth--
		return v, err
	case c == '-' || c >= '0' && c <= '9':
		num, risky, err := d.number()
		if err != nil || !build && !risky {
			return nil, err
		}
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil {
			return nil, fmt.Errorf("number %s out of range", num)
		}
		return f, nil
	case d.literal("true"):
		return true, nil
	case d.literal("false"):
		return false, nil
	case d.literal("null"):
		return nil, nil
	}
	return nil, fmt.Errorf("%w: unexpected byte at %d", errSyntax, d.i)
}

// number consumes a JSON number and returns its text; risky when a
// float64 may not hold it.
func (d *decoder) number() (num []byte, risky bool, err error) {
	start := d.i
	end, risky := JSONNumber(d.b, d.i)
	if end < 0 {
		return nil, false, fmt.Errorf("%w: bad number at byte %d", errSyntax, start)
	}
	d.i = end
	return d.b[start:end], risky, nil
}

// members parses the members of an object or the elements of an array at
// its opening bracket, calling each with the key ("" in an array; escaped
// when it had escapes) once the parser is at the value.
func (d *decoder) members(obj bool, each func(key string, escaped bool) error) error {
	closing := byte(']')
	if obj {
		closing = '}'
	}
	d.i++
	d.ws()
	if d.peek() == closing {
		d.i++
		return nil
	}
	for {
		d.ws()
		var key string
		escaped := false
		if obj {
			if d.peek() != '"' {
				return fmt.Errorf("%w: want a key at byte %d", errSyntax, d.i)
			}
			raw, err := d.rawString()
			if err != nil {
				return err
			}
			key, escaped = d.s[d.start+1:d.i-1], raw == nil
			if escaped {
				key = JSONUnquote(d.b[d.start+1 : d.i-1])
			}
			if err := d.expect(':'); err != nil {
				return err
			}
			d.ws()
		}
		if err := each(key, escaped); err != nil {
			return err
		}
		next, done := JSONNext(d.b, d.i, closing)
		if next < 0 {
			return fmt.Errorf("%w: want ',' or '%c' after byte %d", errSyntax, closing, d.i)
		}
		if d.i = next; done {
			return nil
		}
	}
}

// object parses an object at its '{' (nil when not build).
func (d *decoder) object(build bool) (map[string]any, error) {
	var m map[string]any
	if build {
		m = make(map[string]any, 4)
	}
	err := d.members(true, func(k string, _ bool) error {
		v, err := d.value(build)
		if build {
			m[k] = v
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// array parses an array at its '[' (nil when not build).
func (d *decoder) array(build bool) ([]any, error) {
	var a []any
	if build {
		a = []any{}
	}
	err := d.members(false, func(string, bool) error {
		v, err := d.value(build)
		if build {
			a = append(a, v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}
