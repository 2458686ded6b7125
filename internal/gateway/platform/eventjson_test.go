package platform

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every field of Event and Source but Ack, Delivery and Stored survives the
// stored form: filled by reflection, so a field added later without a stored
// form fails here. (Delivery and Stored are set by the worker that runs a
// queued item, from the item, not carried in it.)
func TestEventRoundTrip(t *testing.T) {
	var ev Event
	fill(t, reflect.ValueOf(&ev).Elem())
	ev.Ack, ev.Delivery, ev.Stored = nil, "", false
	b, err := MarshalEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ev) {
		t.Fatalf("round trip:\n got %+v\nwant %+v\nstored %s", got, ev, b)
	}
	// An Ack is dropped, not an error: the adapter that received it has it.
	ev.Ack = func(string) {}
	if _, err := MarshalEvent(ev); err != nil {
		t.Fatalf("an event with an Ack: %v", err)
	}
}

// fill sets every field of v to a value that is not its zero value.
func fill(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch f.Kind() {
		case reflect.String:
			f.SetString(name + "-value")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Struct:
			if f.Type() == reflect.TypeOf(time.Time{}) {
				f.Set(reflect.ValueOf(time.Date(2026, 12, 4, 18, 0, 0, 123456789, time.UTC)))
				continue
			}
			fill(t, f)
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]any{"old_name": "x", "emojis": []any{"👍"}}))
		case reflect.Func:
			// Ack: no stored form.
		default:
			t.Fatalf("field %s of kind %s: give it a stored form and a value here", name, f.Kind())
		}
	}
}

func TestUnmarshalEventRefuses(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"not json", `{`, "decoding"},
		{"no version", `{"kind":"message"}`, "without a version"},
		{"newer", `{"v":99,"kind":"message"}`, "newer than this hermes"},
		{"no kind", `{"v":1}`, "without a kind"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := UnmarshalEvent([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
