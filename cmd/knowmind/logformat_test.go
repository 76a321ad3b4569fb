package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestJSONLogDurationsInMs: a duration in a JSON log line is milliseconds under a key that
// says so, not nanoseconds.
func TestJSONLogDurationsInMs(t *testing.T) {
	var buf bytes.Buffer
	log, err := newServiceLogger("info", "json", &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("built", "took", 1500*time.Microsecond, "wait_ms", 2*time.Second)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["took_ms"] != 1.5 || line["wait_ms"] != 2000.0 || line["took"] != nil {
		t.Errorf("log line %s", buf.Bytes())
	}
}
