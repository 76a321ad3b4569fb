package handlers

import (
	"context"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
)

// closeGoalTool declares knowmind_close_goal (tools.go: toolList).
var closeGoalTool = declare(tool{
	Name:        "knowmind_close_goal",
	Title:       "Close a goal",
	Description: "Closes an open goal as done or cancelled.",
	Scope:       knowmind.ScopeWrite,
	Toolset:     knowmind.ToolsetEngine,
}, (*service).closeGoal)

// listGoalsTool declares knowmind_list_goals (tools.go: toolList).
var listGoalsTool = declare(tool{
	Name:        "knowmind_list_goals",
	Title:       "List goals",
	Description: "Goals (open by default): due ones first, with fired count and matched memories.",
	Scope:       knowmind.ScopeRead,
	ReadOnly:    true,
	Toolset:     knowmind.ToolsetEngine,
}, (*service).listGoals)

// setGoalTool declares knowmind_set_goal (tools.go: toolList).
var setGoalTool = declare(tool{
	Name:  "knowmind_set_goal",
	Title: "Set a goal",
	Description: "Remembers something to do or watch for: a time goal comes due at due_at; an event goal (trigger) fires " +
		"when a write stores a matching memory, and that write answers it in pm_matches.",
	Scope:   knowmind.ScopeWrite,
	Toolset: knowmind.ToolsetEngine,
}, (*service).setGoal)

// SetGoalParams are knowmind_set_goal's parameters: a time goal (due_at) or an event goal (trigger).
type SetGoalParams struct {
	Text      string        `json:"text" jsonschema:"what to remember to do or watch for" validate:"required,notblank,max=2000"`
	DueAt     string        `json:"due_at,omitempty" jsonschema:"ISO 8601 time a time goal comes due (give due_at or trigger, not both)"`
	Trigger   *TriggerParam `json:"trigger,omitempty" jsonschema:"event goal: fires when a write stores a memory matching every part given"`
	ExpiresAt string        `json:"expires_at,omitempty" jsonschema:"ISO 8601 time after which the goal no longer fires or comes due"`
}

// TriggerParam is an event goal's trigger.
type TriggerParam struct {
	Words    []string     `json:"words,omitempty" jsonschema:"words that must all appear in the memory's text (whole words, any case)" validate:"max=20,dive,notblank,max=100"`
	Entity   *EntityParam `json:"entity,omitempty" jsonschema:"an entity the memory must name"`
	Tags     []string     `json:"tags,omitempty" jsonschema:"the memory must carry one of these tags" validate:"max=20,dive,notblank,max=100"`
	Category string       `json:"category,omitempty" jsonschema:"the memory's category (knowmind_capture's category)" validate:"max=100"`
}

// GoalResult is one goal.
type GoalResult struct {
	Goal knowmind.Goal `json:"goal"`
}

// ListGoalsParams are knowmind_list_goals' parameters.
type ListGoalsParams struct {
	Status string `json:"status,omitempty" jsonschema:"open (default), done, cancelled or all" validate:"omitempty,oneof=open done cancelled all"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"at most this many, 1 to 500 (default 50)" validate:"omitnil,min=1,max=500"`
}

// ListGoalsResult lists goals: due ones first, then newest first.
type ListGoalsResult struct {
	Goals []knowmind.Goal `json:"goals"`
	Count int             `json:"count"`
}

// CloseGoalParams are knowmind_close_goal's parameters.
type CloseGoalParams struct {
	GoalID string `json:"goal_id" jsonschema:"the goal's id" validate:"required,notblank,max=200"`
	Status string `json:"status,omitempty" jsonschema:"done (default) or cancelled" validate:"omitempty,oneof=done cancelled"`
}

func parseTime(param, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, knowmind.InvalidParam(param, "%s must be an ISO 8601 time such as 2026-03-12T10:00:00Z", param)
	}
	at = at.UTC()
	return &at, nil
}

func (s *service) setGoal(ctx context.Context, p SetGoalParams) (GoalResult, error) {
	due, err := parseTime("due_at", p.DueAt)
	if err != nil {
		return GoalResult{}, err
	}
	exp, err := parseTime("expires_at", p.ExpiresAt)
	if err != nil {
		return GoalResult{}, err
	}
	g := knowmind.Goal{Text: strings.TrimSpace(p.Text), DueAt: due, ExpiresAt: exp, Kind: knowmind.GoalTime}
	if p.Trigger != nil {
		tr := knowmind.GoalTrigger{Words: p.Trigger.Words, Tags: p.Trigger.Tags, Category: p.Trigger.Category}
		if e := p.Trigger.Entity; e != nil {
			id := e.ID
			if id == "" {
				id = knowmind.EntitySlug(e.Name)
			}
			if id == "" {
				return GoalResult{}, knowmind.InvalidParam("trigger.entity", "trigger.entity needs an id or a name")
			}
			tr.Entity = &knowmind.EntityRef{Type: e.Type, ID: id}
		}
		for _, w := range tr.Words {
			if len(knowmind.Words(w)) == 0 {
				return GoalResult{}, knowmind.InvalidParam("trigger.words", "trigger.words must contain letters or digits")
			}
		}
		if tr.Empty() {
			return GoalResult{}, knowmind.InvalidParam("trigger", "trigger needs words, an entity, tags or a category")
		}
		g.Trigger, g.Kind = &tr, knowmind.GoalEvent
	}
	switch {
	case due == nil && g.Trigger == nil:
		return GoalResult{}, knowmind.InvalidParam("due_at", "give due_at (a time goal) or trigger (an event goal)")
	case due != nil && g.Trigger != nil:
		return GoalResult{}, knowmind.InvalidParam("trigger", "give due_at or trigger, not both")
	case exp != nil && due != nil && !exp.After(*due):
		return GoalResult{}, knowmind.InvalidParam("expires_at", "expires_at must lie after due_at")
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return GoalResult{}, err
	}
	g, err = t.SetGoal(ctx, g)
	return GoalResult{Goal: g}, err
}

func (s *service) listGoals(ctx context.Context, p ListGoalsParams) (ListGoalsResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return ListGoalsResult{}, err
	}
	status := p.Status
	switch status {
	case "":
		status = knowmind.GoalOpen
	case "all":
		status = ""
	}
	goals, err := t.ListGoals(ctx, status, intOr(p.Limit, 50))
	if err != nil {
		return ListGoalsResult{}, err
	}
	return ListGoalsResult{Goals: goals, Count: len(goals)}, nil
}

func (s *service) closeGoal(ctx context.Context, p CloseGoalParams) (GoalResult, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return GoalResult{}, err
	}
	status := p.Status
	if status == "" {
		status = knowmind.GoalDone
	}
	g, err := t.CloseGoal(ctx, p.GoalID, status)
	return GoalResult{Goal: g}, err
}
