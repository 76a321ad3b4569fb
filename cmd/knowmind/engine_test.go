package main

import (
	"strings"
	"testing"
)

func TestNewExtractors(t *testing.T) {
	cfg, err := parseServeFlags([]string{"--extractor", "llm", "--llm-url", "http://127.0.0.1:1", "--llm-model", "m"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := newExtractors(cfg)
	if err != nil || x.Default != "llm" || x.ByName["llm"] == nil || x.ByName["rules"] == nil {
		t.Fatalf("extractors %+v, %v", x, err)
	}
	cfg, _ = parseServeFlags([]string{"--extractor", "llm"})
	if _, err := newExtractors(cfg); err == nil || !strings.Contains(err.Error(), "--llm-url") {
		t.Fatalf("llm without a URL must be refused, got %v", err)
	}
	cfg, _ = parseServeFlags(nil)
	if x, err := newExtractors(cfg); err != nil || x.Default != "rules" || len(x.ByName) != 1 {
		t.Fatalf("default: %+v, %v", x, err)
	}
}
