package platform

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// eventJSONVersion is the version of Event's stored form. A cluster's work
// queue keeps events across processes and upgrades, so the form is spelt out
// here rather than left to Event's Go field names.
const eventJSONVersion = 1

// eventJSON is Event as a work queue stores it. Ack is a callback into the
// adapter that received the event and has no stored form: a decoded event
// has none. Delivery and Stored come from the queue item, set by the worker
// that runs it.
type eventJSON struct {
	V         int            `json:"v"`
	Kind      EventKind      `json:"kind"`
	Source    Source         `json:"source"`
	Text      string         `json:"text,omitempty"`
	MessageID string         `json:"message_id,omitempty"`
	ReplyTo   string         `json:"reply_to,omitempty"`
	Mentioned bool           `json:"mentioned,omitempty"`
	Data      string         `json:"data,omitempty"`
	Payload   map[string]any `json:"payload,omitempty"`
	Time      time.Time      `json:"time,omitzero"`
}

// MarshalEvent is ev's stored form (JSON, versioned), without its Ack.
func MarshalEvent(ev Event) ([]byte, error) {
	b, err := json.Marshal(eventJSON{V: eventJSONVersion, Kind: ev.Kind, Source: ev.Source, Text: ev.Text,
		MessageID: ev.MessageID, ReplyTo: ev.ReplyTo, Mentioned: ev.Mentioned, Data: ev.Data, Payload: ev.Payload, Time: ev.Time})
	if err != nil {
		return nil, fmt.Errorf("platform: encoding a %s event: %w", ev.Kind, err)
	}
	return b, nil
}

// UnmarshalEvent reads what MarshalEvent wrote. A newer version is refused
// (a newer hermes in the cluster wrote it) rather than half read.
func UnmarshalEvent(b []byte) (Event, error) {
	var e eventJSON
	if err := json.Unmarshal(b, &e); err != nil {
		return Event{}, fmt.Errorf("platform: decoding a stored event: %w", err)
	}
	switch {
	case e.V == 0:
		return Event{}, errors.New("platform: a stored event without a version")
	case e.V > eventJSONVersion:
		return Event{}, fmt.Errorf("platform: a stored event of version %d, newer than this hermes reads (%d): upgrade hermes on this machine", e.V, eventJSONVersion)
	case e.Kind == "":
		return Event{}, errors.New("platform: a stored event without a kind")
	}
	return Event{Kind: e.Kind, Source: e.Source, Text: e.Text, MessageID: e.MessageID, ReplyTo: e.ReplyTo,
		Mentioned: e.Mentioned, Data: e.Data, Payload: e.Payload, Time: e.Time}, nil
}
