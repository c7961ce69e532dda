package events

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var updateMeta = flag.Bool("update", false, "rewrite testdata/meta/*.golden")

// fullMeta returns a value of meta type t with every field set, so that a
// renamed or retyped field shows in the golden file.
func fullMeta(t reflect.Type) Meta {
	v := reflect.New(t).Elem()
	for i := range t.NumField() {
		fill(v.Field(i), t.Field(i).Name)
	}
	return v.Interface().(Meta)
}

func fill(f reflect.Value, name string) {
	switch f.Kind() {
	case reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		fill(p.Elem(), name)
		f.Set(p)
	case reflect.String:
		f.SetString(strings.ToLower(name[:1]) + name[1:])
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Int, reflect.Int64:
		f.SetInt(int64(len(name)))
	case reflect.Float64:
		f.SetFloat(0.25)
	case reflect.Slice:
		f.Set(reflect.ValueOf([]string{name + "1", name + "2"}))
	default:
		panic("fullMeta: field " + name + " of kind " + f.Kind().String() + ": teach fill and MetaOf about it")
	}
}

// The log's schema is a checked contract: one golden JSON file per kind,
// the meta with every field set, as writers write it.
func TestMetaGolden(t *testing.T) {
	for _, k := range Kinds {
		m, ok := MetaTypes[k]
		if !ok {
			t.Errorf("kind %s has no meta type in MetaTypes", k)
			continue
		}
		if m.MetaKind() != k {
			t.Errorf("MetaTypes[%s] is a %T, whose kind is %s", k, m, m.MetaKind())
		}
		full := fullMeta(reflect.TypeOf(m))
		e := NewWithMeta("s", RoleRelayBaton, "text", full)
		got, err := json.MarshalIndent(e.Meta, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("testdata", "meta", string(k)+".golden")
		if *updateMeta {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./events -run TestMetaGolden -update writes it)", err)
		}
		if string(got) != string(want) {
			t.Errorf("meta of %s changed: the log's schema is a contract (old logs must still resume); if the change is meant, update %s with -update\n--- got\n%s--- want\n%s", k, path, got, want)
		}
		// What a writer writes, a reader reads back, field for field.
		back, err := decodeAny(k, &e)
		if err != nil || !reflect.DeepEqual(back, full) {
			t.Errorf("%s: decoded %+v (%v), want %+v", k, back, err, full)
		}
	}
	if len(MetaTypes) != len(Kinds) {
		t.Errorf("MetaTypes has %d kinds, Kinds %d", len(MetaTypes), len(Kinds))
	}
}

func decodeAny(k Kind, e *Event) (Meta, error) {
	switch k {
	case KindMessage:
		return MetaOf[MessageMeta](e)
	case KindCommand:
		return MetaOf[CommandMeta](e)
	case KindPromptPreview:
		return MetaOf[PromptPreviewMeta](e)
	case KindAgentRun:
		return MetaOf[AgentRunMeta](e)
	case KindChanges:
		return MetaOf[ChangesMeta](e)
	case KindPlan:
		return MetaOf[PlanMeta](e)
	case KindExecute:
		return MetaOf[ExecuteMeta](e)
	case KindReview:
		return MetaOf[ReviewMeta](e)
	case KindDiagnose:
		return MetaOf[DiagnoseMeta](e)
	case KindHandoff:
		return MetaOf[HandoffMeta](e)
	case KindStatus:
		return MetaOf[StatusMeta](e)
	case KindBudget:
		return MetaOf[BudgetMeta](e)
	case KindAudit:
		return MetaOf[AuditMeta](e)
	case KindChatSent:
		return MetaOf[ChatSentMeta](e)
	case KindChatDelivered:
		return MetaOf[ChatDeliveredMeta](e)
	case KindChatReply:
		return MetaOf[ChatReplyMeta](e)
	}
	return nil, nil
}

// Logs written before the typed meta decode with it: every event of the
// repository's log fixtures, but the two deliberately wrong-typed metas
// (damaged.jsonl, and other-version.jsonl's agent object).
func TestMetaDecodesExistingLogs(t *testing.T) {
	files, _ := filepath.Glob("../room/testdata/resume/*.jsonl")
	files = append(files, "../testdata/replay/conversation.jsonl")
	if len(files) < 5 {
		t.Fatalf("fixtures not found: %v", files)
	}
	decoded, wrong := 0, 0
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			var e Event
			if err := DecodeEvent(sc.Bytes(), &e); err != nil || !ValidKind(e.Kind) {
				continue // damaged lines are the fixtures' point
			}
			if _, err := decodeAny(e.Kind, &e); err != nil {
				wrong++
				if !strings.Contains(path, "damaged") && !strings.Contains(path, "other-version") {
					t.Errorf("%s:%d: %v", path, n, err)
				}
				continue
			}
			decoded++
		}
		f.Close()
	}
	if decoded < 40 || wrong != 2 {
		t.Errorf("decoded %d events, %d with a wrong-typed meta (want the two fixtures' ones)", decoded, wrong)
	}
}

func TestMetaOfWrongKindAndType(t *testing.T) {
	e := New("s", RoleUser, KindCommand, "/x")
	e.Meta = MetaJSON(`{"command":7.0,"agent":"codex","step":1.5,"confirmed":true}`)
	m, err := MetaOf[CommandMeta](&e)
	if err == nil || !strings.Contains(err.Error(), "command, step") || m.Agent != "codex" || m.Command != "" || m.Step != 0 || m.Confirmed == nil || !*m.Confirmed {
		t.Fatalf("%+v %v", m, err)
	}
	if _, err := MetaOf[StatusMeta](&e); err == nil {
		t.Fatal("a command decoded as a status")
	}
}
