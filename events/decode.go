package events

import (
	"encoding/binary"
	"encoding/json"
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
	last  []byte // the quoted form of the last string read, for unescape
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return
		}
	}
}

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
	if len(d.b)-d.i >= len(word) && string(d.b[d.i:d.i+len(word)]) == word {
		d.i += len(word)
		return true
	}
	return false
}

// event parses the top-level object into e.
func (d *decoder) event(e *Event) error {
	if err := d.expect('{'); err != nil {
		return errors.New("not a JSON object")
	}
	d.ws()
	if d.peek() == '}' {
		d.i++
	} else {
		for {
			d.ws()
			key, err := d.rawString()
			if err != nil {
				return err
			}
			if err := d.expect(':'); err != nil {
				return err
			}
			d.ws()
			if err := d.field(e, key); err != nil {
				return err
			}
			d.ws()
			c := d.peek()
			d.i++
			if c == '}' {
				break
			}
			if c != ',' {
				return fmt.Errorf("%w: want ',' or '}' at byte %d", errSyntax, d.i-1)
			}
		}
	}
	d.ws()
	if d.i != len(d.b) {
		return fmt.Errorf("%w: trailing data at byte %d", errSyntax, d.i)
	}
	return nil
}

func (d *decoder) field(e *Event, key []byte) error {
	var err error
	switch string(key) {
	case "schemaVersion":
		if d.literal("null") {
			return nil
		}
		var num []byte
		if num, err = d.number(); err != nil {
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
		var v any
		if v, err = d.value(); err == nil {
			e.Meta = v.(map[string]any)
		}
	default:
		_, err = d.value()
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
	start := d.i + 1
	raw, err := d.rawString()
	if err != nil {
		return "", err
	}
	if raw == nil { // had escapes: decode the quoted form the slow way
		return d.unescape()
	}
	return d.s[start : start+len(raw)], nil
}

// rawString consumes a JSON string. It returns its bytes when the string
// has no escapes; nil when it has some (d.last holds the quoted form).
func (d *decoder) rawString() ([]byte, error) {
	if d.peek() != '"' {
		return nil, fmt.Errorf("%w: want a string at byte %d", errSyntax, d.i)
	}
	start := d.i
	d.i++
	escaped := false
	b := d.b
	for {
		i := plainRun(b, d.i)
		if i >= len(b) {
			return nil, fmt.Errorf("%w: unterminated string", errSyntax)
		}
		switch c := b[i]; {
		case c == '"':
			d.i = i + 1
			d.last = b[start:d.i]
			if escaped {
				return nil, nil
			}
			return b[start+1 : i], nil
		case c == '\\':
			escaped = true
			d.i = i + 2 // the escaped byte; unescape validates the escape
		default:
			return nil, fmt.Errorf("%w: control character in string at byte %d", errSyntax, i)
		}
	}
}

const (
	lo7 = 0x0101010101010101
	hi1 = 0x8080808080808080
)

// plainRun returns the index of the first byte at or after i that is a
// quote, a backslash or a control character (len(b) if none), eight bytes
// at a time.
func plainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ ('"' * lo7)
		s := x ^ ('\\' * lo7)
		// A zero byte in q or s, or a byte below 0x20 in x, sets its high bit.
		m := ((q - lo7) &^ q) | ((s - lo7) &^ s) | ((x - 0x20*lo7) &^ x)
		if m&hi1 != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

func (d *decoder) unescape() (string, error) {
	var s string
	if err := json.Unmarshal(d.last, &s); err != nil {
		return "", fmt.Errorf("%w: bad string escape", errSyntax)
	}
	return s, nil
}

func (d *decoder) refs(e *Event) error {
	if d.literal("null") {
		e.Refs = nil
		return nil
	}
	if d.peek() != '{' {
		return errors.New("refs is not an object")
	}
	d.i++
	m := map[string]string{}
	e.Refs = m
	d.ws()
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		d.ws()
		var k, v string
		if d.peek() != '"' {
			return fmt.Errorf("%w: want a key at byte %d", errSyntax, d.i)
		}
		if err := d.stringField(&k); err != nil {
			return err
		}
		if err := d.expect(':'); err != nil {
			return err
		}
		d.ws()
		if d.peek() != '"' && !d.literal("null") {
			return fmt.Errorf("refs[%q] is not a string", k)
		}
		if d.peek() == '"' {
			if err := d.stringField(&v); err != nil {
				return err
			}
		}
		m[k] = v
		d.ws()
		c := d.peek()
		d.i++
		if c == '}' {
			return nil
		}
		if c != ',' {
			return fmt.Errorf("%w: want ',' or '}' at byte %d", errSyntax, d.i-1)
		}
	}
}

const maxDepth = 1000

// value parses any JSON value into the types encoding/json uses for any.
func (d *decoder) value() (any, error) {
	switch c := d.peek(); {
	case c == '"':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return s, nil
	case c == '{':
		if d.depth++; d.depth > maxDepth {
			return nil, errors.New("JSON nested too deeply")
		}
		m, err := d.object()
		d.depth--
		return m, err
	case c == '[':
		if d.depth++; d.depth > maxDepth {
			return nil, errors.New("JSON nested too deeply")
		}
		a, err := d.array()
		d.depth--
		return a, err
	case c == '-' || c >= '0' && c <= '9':
		num, err := d.number()
		if err != nil {
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

// number consumes a JSON number and returns its text.
func (d *decoder) number() ([]byte, error) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.peek() == '-' {
		d.i++
	}
	switch {
	case d.peek() == '0':
		d.i++
	case digits() == 0:
		return nil, fmt.Errorf("%w: bad number at byte %d", errSyntax, start)
	}
	if d.peek() == '.' {
		d.i++
		if digits() == 0 {
			return nil, fmt.Errorf("%w: bad number at byte %d", errSyntax, start)
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.i++
		if c := d.peek(); c == '+' || c == '-' {
			d.i++
		}
		if digits() == 0 {
			return nil, fmt.Errorf("%w: bad number at byte %d", errSyntax, start)
		}
	}
	return d.b[start:d.i], nil
}

// object parses an object after its '{' is seen.
func (d *decoder) object() (map[string]any, error) {
	d.i++
	m := make(map[string]any, 4)
	d.ws()
	if d.peek() == '}' {
		d.i++
		return m, nil
	}
	for {
		d.ws()
		if d.peek() != '"' {
			return nil, fmt.Errorf("%w: want a key at byte %d", errSyntax, d.i)
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if err := d.expect(':'); err != nil {
			return nil, err
		}
		d.ws()
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.ws()
		c := d.peek()
		d.i++
		if c == '}' {
			return m, nil
		}
		if c != ',' {
			return nil, fmt.Errorf("%w: want ',' or '}' at byte %d", errSyntax, d.i-1)
		}
	}
}

// array parses an array after its '[' is seen.
func (d *decoder) array() ([]any, error) {
	d.i++
	a := []any{}
	d.ws()
	if d.peek() == ']' {
		d.i++
		return a, nil
	}
	for {
		d.ws()
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.ws()
		c := d.peek()
		d.i++
		if c == ']' {
			return a, nil
		}
		if c != ',' {
			return nil, fmt.Errorf("%w: want ',' or ']' at byte %d", errSyntax, d.i-1)
		}
	}
}
