package main

import (
	"fmt"
	"os"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/extract"
	"github.com/knowmind/knowmind/handlers"
	"github.com/knowmind/knowmind/shapes"
)

// newExtractors builds knowmind_capture's extractors: rules always, llm when
// --llm-url is set (the same model then writes knowmind_briefing) (its key from KNOWMIND_LLM_API_KEY, never a flag, so it
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
		x.Briefing = l // knowmind_briefing's mode llm; the extractive briefing stays the offline default
	}
	if _, ok := x.ByName[x.Default]; !ok {
		return x, fmt.Errorf("--extractor %q is not available (rules, or llm with --llm-url and --llm-model)", x.Default)
	}
	return x, nil
}

// shapesVocabulary re-reads the shapes directory's entity types and
// categories (the handlers cache them for five minutes), so an edited shape
// file shows in tools/list without a restart; nil without a directory (the
// embedded default cannot change).
func shapesVocabulary(dir string) func() ([]string, []string, error) {
	if dir == "" {
		return nil
	}
	return func() ([]string, []string, error) {
		set, err := shapes.Load(dir)
		if err != nil {
			return nil, nil, err
		}
		return set.EntityTypes(), set.Categories(), nil
	}
}
