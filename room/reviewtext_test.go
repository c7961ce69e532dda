package room

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/relay-baton/relay-baton/events"
)

const longStep = "Update `hello.py` so that **everything** it prints ends with a newline, including a rather long greeting line"

// /review keeps a long plan step's words whole (cut at a word, then
// wrapped), and a coloured terminal shows its inline Markdown rendered.
func TestReviewStepsWholeWordsAndRendered(t *testing.T) {
	h := newHarness(t)
	writePlan(t, h, "## Steps\n1. "+longStep+" and more words to be sure it is past the cut of the step line\n## Risks\nnone\n")
	touch(h.dir, "hello.py", "print('hello')\n")
	r, err := h.e.Review(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	text := r.Text()
	step := regexp.MustCompile(`step 1: (.*) \[hello\.py\]`).FindStringSubmatch(text)
	if step == nil || !strings.HasSuffix(step[1], "…") {
		t.Fatalf("no cut step line:\n%s", text)
	}
	words := strings.Fields(strings.TrimSuffix(step[1], "…"))
	all := strings.Fields(longStep + " and more words to be sure it is past the cut of the step line")
	if last := words[len(words)-1]; last != all[len(words)-1] {
		t.Fatalf("the step is cut mid-word (%q):\n%s", last, text)
	}

	var b bytes.Buffer
	p := newPrinter(&b, true, false)
	p.setWidth(func() int { return 60 })
	p.sayInline(events.RoleRelayBaton, text)
	out := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(b.String(), "")
	if strings.Contains(out, "`hello.py`") || strings.Contains(out, "**everything**") || !strings.Contains(out, "hello.py so that everything") {
		t.Fatalf("inline Markdown not rendered:\n%s", out)
	}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if len([]rune(l)) > 60 {
			t.Fatalf("row wider than 60 columns: %q\n%s", l, out)
		}
	}
	b.Reset()
	plain := newPrinter(&b, false, false)
	plain.sayInline(events.RoleRelayBaton, text)
	if !strings.Contains(b.String(), "`hello.py`") {
		t.Fatalf("without colour the step is not as written:\n%s", b.String())
	}
}
