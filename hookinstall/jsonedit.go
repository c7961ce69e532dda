package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tailscale/hujson"
)

// jsonDoc is a JSON file edited in place: what is not edited (numbers past
// float64, lone surrogates, key order, white space, values relay-baton does
// not know) is kept byte for byte, and what is added takes the file's
// indentation. hujson holds the file as an exact syntax tree; relay-baton
// walks that tree itself instead of using JSON Patch, whose inserts are
// unformatted. It is the mechanism under MergeHooks (what it inserts or
// removes is hooks.go's).
type jsonDoc struct {
	src  []byte
	root hujson.Value
	unit string // one level of indentation, as the file has it
}

// parseJSONDoc parses a JSON object; empty input is an empty object.
func parseJSONDoc(b []byte) (*jsonDoc, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}\n")
	}
	if !json.Valid(b) {
		var x any
		err := json.Unmarshal(b, &x)
		return nil, fmt.Errorf("settings file is not valid JSON (fix or move it, then retry): %w", err)
	}
	v, err := hujson.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("settings file is not valid JSON (fix or move it, then retry): %w", err)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, errors.New("settings file is not a JSON object (fix or move it, then retry)")
	}
	return &jsonDoc{src: b, root: v, unit: indentUnit(b)}, nil
}

// indentUnit is the white space that starts the file's first indented
// line, or two spaces.
func indentUnit(b []byte) string {
	for i := 0; i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		j := i + 1
		for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
			j++
		}
		if j > i+1 && j < len(b) && b[j] != '\n' && b[j] != '\r' {
			return string(b[i+1 : j])
		}
	}
	return "  "
}

// lineIndent is the white space that starts the line holding offset off.
func (d *jsonDoc) lineIndent(off int) string {
	if off <= 0 || off > len(d.src) {
		return ""
	}
	start := bytes.LastIndexByte(d.src[:off], '\n') + 1
	end := start
	for end < len(d.src) && (d.src[end] == ' ' || d.src[end] == '\t') {
		end++
	}
	return string(d.src[start:end])
}

// bytes packs the document; it is valid JSON or an error.
func (d *jsonDoc) bytes() ([]byte, error) {
	b := d.root.Pack()
	if !json.Valid(b) {
		return nil, errors.New("internal error: the edited settings are not valid JSON; nothing was written")
	}
	return b, nil
}

// jmember returns the value of obj's member name, or nil.
func jmember(obj *hujson.Object, name string) *hujson.Value {
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			return &obj.Members[i].Value
		}
	}
	return nil
}

// removeMember removes obj's member name.
func removeMember(obj *hujson.Object, name string) {
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
			if len(obj.Members) > 0 {
				last := &obj.Members[len(obj.Members)-1].Value
				if len(bytes.TrimSpace(last.AfterExtra)) == 0 {
					last.AfterExtra = nil
				}
			}
			return
		}
	}
}

// removeElements keeps the elements of arr for which keep is true.
func removeElements(arr *hujson.Array, keep func(*hujson.Value) bool) (removed int) {
	kept := arr.Elements[:0]
	for i := range arr.Elements {
		if keep(&arr.Elements[i]) {
			kept = append(kept, arr.Elements[i])
		} else {
			removed++
		}
	}
	arr.Elements = kept
	if n := len(kept); n > 0 && len(bytes.TrimSpace(kept[n-1].AfterExtra)) == 0 {
		kept[n-1].AfterExtra = nil // no trailing comma: the last element was removed
	}
	return removed
}

// formatted returns compact JSON text v indented for a value that starts
// on a line indented by indent, as a hujson value.
func (d *jsonDoc) formatted(compact []byte, indent string, multiline bool) (hujson.Value, error) {
	text := compact
	if multiline {
		var b bytes.Buffer
		if err := json.Indent(&b, compact, indent, d.unit); err != nil {
			return hujson.Value{}, err
		}
		text = b.Bytes()
	}
	v, err := hujson.Parse(text)
	if err != nil {
		return hujson.Value{}, err
	}
	v.BeforeExtra, v.AfterExtra = nil, nil
	return v, nil
}

// multiline reports whether a container's items go one to a line: those of
// an empty container will.
func multiline(items int, firstBefore hujson.Extra) bool {
	return items == 0 || bytes.ContainsRune(firstBefore, '\n')
}

// appendElement appends the compact JSON value to arr, whose line is
// indented by indent.
func (d *jsonDoc) appendElement(arr *hujson.Array, compact []byte, indent string) error {
	var before hujson.Extra
	if len(arr.Elements) > 0 {
		before = arr.Elements[0].BeforeExtra
	}
	ml := multiline(len(arr.Elements), before)
	v, err := d.formatted(compact, indent+d.unit, ml)
	if err != nil {
		return err
	}
	switch {
	case len(arr.Elements) > 0:
		v.BeforeExtra = append(hujson.Extra(nil), arr.Elements[len(arr.Elements)-1].BeforeExtra...)
	default:
		v.BeforeExtra = hujson.Extra("\n" + indent + d.unit)
		arr.AfterExtra = hujson.Extra("\n" + indent)
	}
	arr.Elements = append(arr.Elements, v)
	return nil
}

// appendMember appends the member name: compact to obj, whose line is
// indented by indent.
func (d *jsonDoc) appendMember(obj *hujson.Object, name string, compact []byte, indent string) error {
	var before hujson.Extra
	if len(obj.Members) > 0 {
		before = obj.Members[0].Name.BeforeExtra
	}
	ml := multiline(len(obj.Members), before)
	v, err := d.formatted(compact, indent+d.unit, ml)
	if err != nil {
		return err
	}
	v.BeforeExtra = hujson.Extra(" ")
	key := hujson.Value{Value: hujson.String(name)}
	switch {
	case len(obj.Members) > 0:
		last := obj.Members[len(obj.Members)-1]
		key.BeforeExtra = append(hujson.Extra(nil), last.Name.BeforeExtra...)
		v.BeforeExtra = append(hujson.Extra(nil), last.Value.BeforeExtra...)
	default:
		key.BeforeExtra = hujson.Extra("\n" + indent + d.unit)
		obj.AfterExtra = hujson.Extra("\n" + indent)
	}
	obj.Members = append(obj.Members, hujson.ObjectMember{Name: key, Value: v})
	return nil
}
