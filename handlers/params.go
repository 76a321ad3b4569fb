package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/knowmind/knowmind"
)

// Tool parameters are checked once, strictly, with errors that name the
// parameter (-32602): unknown parameters, missing required ones, wrong JSON
// types, then the validate tags. The input schema is derived from the same
// struct (required from json tags without omitempty plus validate:"required";
// minimum/maximum/enum from validate min/max/oneof), so what tools/list shows
// and what is enforced cannot drift apart.

var validate = newValidator()

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(jsonName)
	// notblank: a string that is more than whitespace ("query fehlt oder leer").
	_ = v.RegisterValidation("notblank", func(fl validator.FieldLevel) bool {
		return strings.TrimSpace(fl.Field().String()) != ""
	})
	return v
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

// paramsCodec decodes and validates the arguments of one tool.
type paramsCodec[P any] struct {
	schema   *jsonschema.Schema
	required []string
}

func newParamsCodec[P any]() (*paramsCodec[P], error) {
	rt := reflect.TypeFor[P]()
	if rt.Kind() != reflect.Struct {
		return nil, fmt.Errorf("params type %v must be a struct", rt)
	}
	s, err := jsonschema.For[P](nil)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	for _, f := range reflect.VisibleFields(rt) {
		name := jsonName(f)
		prop := s.Properties[name]
		if name == "" || prop == nil || !f.IsExported() {
			continue
		}
		if err := constrain(prop, name, f, &s.Required); err != nil {
			return nil, err
		}
	}
	// Unknown parameters are refused by the strict decoding before the SDK
	// sees the arguments (-32602 naming the parameter), so the schema need
	// not say so on every tool of tools/list.
	s.AdditionalProperties = nil
	// A top-level null argument counts as absent (dropNulls removes it before
	// the SDK's schema check), so "null" in a parameter's type only lengthens
	// tools/list.
	for _, prop := range s.Properties {
		if len(prop.Types) == 2 && prop.Types[0] == "null" {
			prop.Type, prop.Types = prop.Types[1], nil
		}
	}
	required := slices.Clone(s.Required)
	for _, f := range reflect.VisibleFields(rt) {
		name := jsonName(f)
		if prop := s.Properties[name]; prop != nil && f.IsExported() {
			if err := publish(s, prop, name, f); err != nil {
				return nil, err
			}
		}
	}
	return &paramsCodec[P]{schema: s, required: required}, nil
}

// publish applies a field's schema tag: what tools/list shows about a
// parameter whose check is not a -32602 one (content: absent is -32603
// content_required, too long -32603 too_large). Those checks run in the
// params' precheck, before the SDK's own schema check would answer an
// isError result instead of the spec's code.
//
//	schema:"required"         listed as required (the precheck refuses its absence)
//	schema:"maxLength=N"      maxLength N characters (the precheck refuses longer)
func publish(s *jsonschema.Schema, prop *jsonschema.Schema, name string, f reflect.StructField) error {
	tag := f.Tag.Get("schema")
	if tag == "" {
		return nil
	}
	for _, rule := range strings.Split(tag, ",") {
		key, arg, _ := strings.Cut(rule, "=")
		switch key {
		case "required":
			if !slices.Contains(s.Required, name) {
				s.Required = append(s.Required, name)
			}
		case "maxLength":
			n, err := strconv.Atoi(arg)
			if err != nil {
				return fmt.Errorf("field %s: bad schema maxLength=%q", name, arg)
			}
			prop.MaxLength = jsonschema.Ptr(n)
		default:
			return fmt.Errorf("field %s: unknown schema rule %q", name, rule)
		}
	}
	return nil
}

// prechecker is implemented by params with checks that answer something other
// than -32602 (see publish); decode runs it after validation.
type prechecker interface{ precheck() error }

// normalise rewrites integer parameters written as integral JSON numbers
// (5.0, 5e0: JSON Schema counts them as integers) to plain integers, so
// that decoding into Go ints and the SDK's schema check both accept them.
// Anything else is left as it is, for decode to name.
func (c *paramsCodec[P]) normalise(args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	changed := false
	for name, v := range m {
		prop := c.schema.Properties[name]
		if prop == nil || (prop.Type != "integer" && !slices.Contains(prop.Types, "integer")) {
			continue
		}
		raw := strings.TrimSpace(string(v))
		if raw == "" || !strings.ContainsAny(raw, ".eE") {
			continue
		}
		var f float64
		if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			continue
		}
		m[name] = json.RawMessage(strconv.FormatInt(int64(f), 10))
		changed = true
	}
	if !changed {
		return args
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

// constrain copies a field's validate tag into its property schema.
func constrain(prop *jsonschema.Schema, name string, f reflect.StructField, required *[]string) error {
	kind := f.Type.Kind()
	if kind == reflect.Pointer {
		kind = f.Type.Elem().Kind()
	}
	for _, rule := range strings.Split(f.Tag.Get("validate"), ",") {
		key, arg, _ := strings.Cut(rule, "=")
		switch key {
		case "dive":
			return nil // what follows applies to elements
		case "required":
			if !slices.Contains(*required, name) {
				*required = append(*required, name)
			}
		case "notblank":
			if kind == reflect.String && prop.MinLength == nil {
				prop.MinLength = jsonschema.Ptr(1)
			}
		case "min", "max", "gte", "lte":
			n, err := strconv.ParseFloat(arg, 64)
			if err != nil {
				return fmt.Errorf("field %s: bad %s=%q", name, key, arg)
			}
			lower := key == "min" || key == "gte"
			switch kind {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
				reflect.Float32, reflect.Float64:
				if lower {
					prop.Minimum = &n
				} else {
					prop.Maximum = &n
				}
			case reflect.String:
				if lower {
					prop.MinLength = jsonschema.Ptr(int(n))
				} else {
					prop.MaxLength = jsonschema.Ptr(int(n))
				}
			case reflect.Slice:
				if lower {
					prop.MinItems = jsonschema.Ptr(int(n))
				} else {
					prop.MaxItems = jsonschema.Ptr(int(n))
				}
			}
		case "oneof":
			prop.Enum = nil
			for _, v := range strings.Fields(arg) {
				prop.Enum = append(prop.Enum, v)
			}
		}
	}
	return nil
}

// decode parses args into P. Every failure is EINVALID naming the parameter.
func (c *paramsCodec[P]) decode(args json.RawMessage) (P, error) {
	var p P
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return p, knowmind.InvalidParam("arguments", "arguments must be a JSON object")
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names) // a stable first error
	for _, name := range names {
		if c.schema.Properties[name] == nil {
			return p, knowmind.InvalidParam(name, "unknown parameter %q", name)
		}
	}
	for _, name := range c.required {
		if v, ok := fields[name]; !ok || string(v) == "null" {
			return p, knowmind.InvalidParam(name, "%s is required", name)
		}
	}
	if err := json.Unmarshal(args, &p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			name, _, _ := strings.Cut(te.Field, ".")
			return p, knowmind.InvalidParam(name, "%s must be %s", name, jsonTypeName(te.Type))
		}
		return p, knowmind.InvalidParam("arguments", "arguments do not match the tool's input schema")
	}
	if err := validate.Struct(p); err != nil {
		var ves validator.ValidationErrors
		if errors.As(err, &ves) && len(ves) > 0 {
			return p, fieldError(ves[0])
		}
		return p, knowmind.InvalidParam("arguments", "invalid arguments")
	}
	if pc, ok := any(p).(prechecker); ok {
		if err := pc.precheck(); err != nil {
			return p, err
		}
	}
	return p, nil
}

// checkContent is the precheck of a content parameter: -32603
// content_required when absent or blank, too_large beyond MaxContentChars.
func checkContent(content string) error {
	if strings.TrimSpace(content) == "" {
		return knowmind.Internal(knowmind.ReasonContentRequired, "content is required and must not be empty")
	}
	if len(content) > knowmind.MaxContentChars && utf8.RuneCountInString(content) > knowmind.MaxContentChars {
		return knowmind.Internal(knowmind.ReasonTooLarge, "content exceeds %d characters", knowmind.MaxContentChars)
	}
	return nil
}

func fieldError(fe validator.FieldError) *knowmind.Error {
	name := fe.Field()
	switch fe.Tag() {
	case "required", "notblank":
		return knowmind.InvalidParam(name, "%s is required and must not be empty", name)
	case "min", "gte":
		if fe.Kind() == reflect.String {
			return knowmind.InvalidParam(name, "%s must have at least %s characters", name, fe.Param())
		}
		if fe.Kind() == reflect.Slice {
			return knowmind.InvalidParam(name, "%s must have at least %s elements", name, fe.Param())
		}
		return knowmind.InvalidParam(name, "%s must be at least %s", name, fe.Param())
	case "max", "lte":
		if fe.Kind() == reflect.String {
			return knowmind.InvalidParam(name, "%s must have at most %s characters", name, fe.Param())
		}
		if fe.Kind() == reflect.Slice {
			return knowmind.InvalidParam(name, "%s must have at most %s elements", name, fe.Param())
		}
		return knowmind.InvalidParam(name, "%s must be at most %s", name, fe.Param())
	case "oneof":
		return knowmind.InvalidParam(name, "%s must be one of %s", name, strings.Join(strings.Fields(fe.Param()), ", "))
	}
	return knowmind.InvalidParam(name, "%s is invalid (%s)", name, fe.Tag())
}

func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "of another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "of another type"
}
