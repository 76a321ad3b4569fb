package main

import (
	"fmt"
	"os"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/extract"
	"github.com/knowmind/knowmind/handlers"
)

// newExtractors builds knowmind_capture's extractors: rules always, llm when
// --llm-url is set (its key from KNOWMIND_LLM_API_KEY, never a flag, so it
// stays out of process listings). --extractor names the default.
func newExtractors(cfg Config) (handlers.Extractors, error) {
	x := handlers.Extractors{ByName: map[string]knowmind.Extractor{"rules": extract.Rules{}}, Default: cfg.Extractor}
	if cfg.LLMURL != "" {
		l, err := extract.NewLLM(extract.LLMConfig{URL: cfg.LLMURL, Model: cfg.LLMModel, APIKey: os.Getenv("KNOWMIND_LLM_API_KEY"),
			Timeout: cfg.LLMTimeout})
		if err != nil {
			return x, err
		}
		x.ByName["llm"] = l
	}
	if _, ok := x.ByName[x.Default]; !ok {
		return x, fmt.Errorf("--extractor %q is not available (rules, or llm with --llm-url and --llm-model)", x.Default)
	}
	return x, nil
}
