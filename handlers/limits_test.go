package handlers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/shapes"
)

// paramLimits names, for every validate tag with a max= in this package, the domain constants
// its max= numbers must equal, in the tag's order (a list's length, then after dive its
// elements'). A tag cannot name a constant, so the number is written twice; this table is the
// one place that ties them, and TestParamLimitsAreTheDomainsConstants fails on a tag it does
// not list.
var paramLimits = map[string][]int{
	"BriefingParams.MaxTokens":               {knowmind.MaxBriefingTokens},
	"CaptureCalibrationParams.Extractor":     {knowmind.MaxExtractorChars},
	"CaptureParams.Category":                 {knowmind.MaxCategoryChars},
	"CaptureParams.Extractor":                {knowmind.MaxExtractorChars},
	"CaptureParams.Source":                   {knowmind.MaxSourceChars},
	"CaptureParams.Text":                     {knowmind.MaxCaptureChars},
	"CloseGoalParams.GoalID":                 {knowmind.MaxIDChars},
	"ContextParams.BudgetTokens":             {knowmind.MaxBudgetTokens},
	"ContextParams.Project":                  {knowmind.MaxProjectHandle},
	"ContextParams.Query":                    {knowmind.RecallMaxQueryChars},
	"CreateNoteParams.Links":                 {knowmind.MaxNoteLinks},
	"CreateNoteParams.Path":                  {knowmind.MaxNotePathChars},
	"CreateNoteParams.Project":               {knowmind.MaxProjectHandle},
	"CreateNoteParams.Tags":                  {knowmind.MaxTags, knowmind.MaxTagChars},
	"CreateNoteParams.Type":                  {knowmind.MaxNoteTypeChars},
	"CreateNotesParams.Notes":                {knowmind.MaxBatchNotes},
	"DeleteNoteParams.ID":                    {knowmind.MaxIDChars},
	"DeleteNoteParams.VersionToken":          {knowmind.MaxVersionTokenChars},
	"EditNoteParams.Find":                    {knowmind.MaxFindChars},
	"EditNoteParams.Heading":                 {knowmind.MaxTitleChars},
	"EditNoteParams.ID":                      {knowmind.MaxIDChars},
	"EditNoteParams.VersionToken":            {knowmind.MaxVersionTokenChars},
	"EntityParam.ID":                         {knowmind.MaxIDChars},
	"EntityParam.Name":                       {knowmind.MaxEntityNameChars},
	"EntityParam.Type":                       {shapes.MaxNameLen},
	"ExploreParams.Hops":                     {knowmind.ExploreMaxHops},
	"ExploreParams.MemoryID":                 {knowmind.MaxIDChars},
	"GetNoteParams.ID":                       {knowmind.MaxIDChars},
	"GetNoteParams.Project":                  {knowmind.MaxProjectHandle},
	"LinkManyParams.Links":                   {knowmind.MaxBatchLinks},
	"LinkNoteParams.From":                    {knowmind.MaxIDChars},
	"LinkNoteParams.RelType":                 {shapes.MaxNameLen},
	"LinkNoteParams.To":                      {knowmind.MaxIDChars},
	"LinkNoteParams.ToTitle":                 {knowmind.MaxTitleChars},
	"LinkParams.FromID":                      {knowmind.MaxIDChars},
	"LinkParams.RelType":                     {shapes.MaxNameLen},
	"LinkParams.ToID":                        {knowmind.MaxIDChars},
	"ListDraftsParams.Limit":                 {knowmind.MaxListDrafts},
	"ListEntitiesParams.Limit":               {knowmind.MaxListEntities},
	"ListEntitiesParams.Type":                {shapes.MaxNameLen},
	"ListGoalsParams.Limit":                  {knowmind.MaxGoalsListed},
	"ListNotesParams.Cursor":                 {knowmind.MaxNotesCursorChars},
	"ListNotesParams.Limit":                  {knowmind.MaxListNotes},
	"ListNotesParams.Path":                   {knowmind.MaxNotePathChars},
	"ListNotesParams.Project":                {knowmind.MaxProjectHandle},
	"ListNotesParams.Tag":                    {knowmind.MaxTagChars},
	"ListRecentParams.Cursor":                {knowmind.MaxRecentCursorChars},
	"ListRecentParams.K":                     {graph.MaxRecent},
	"ListRelationsParams.MemoryID":           {knowmind.MaxIDChars},
	"MoveFolderParams.From":                  {knowmind.MaxNotePathChars},
	"MoveFolderParams.Project":               {knowmind.MaxProjectHandle},
	"MoveFolderParams.To":                    {knowmind.MaxNotePathChars},
	"MoveNoteParams.ID":                      {knowmind.MaxIDChars},
	"MoveNoteParams.Path":                    {knowmind.MaxNotePathChars},
	"MoveNoteParams.VersionToken":            {knowmind.MaxVersionTokenChars},
	"RecallAtTimeParams.K":                   {knowmind.RecallMaxK},
	"RecallAtTimeParams.Query":               {knowmind.RecallMaxQueryChars},
	"RecallParams.Hops":                      {knowmind.RecallMaxHops},
	"RecallParams.K":                         {knowmind.RecallMaxK},
	"RecallParams.Query":                     {knowmind.RecallMaxQueryChars},
	"RecentActivityParams.Cursor":            {knowmind.MaxRecentCursorChars},
	"RecentActivityParams.Limit":             {knowmind.MaxActivity},
	"RecentActivityParams.Project":           {knowmind.MaxProjectHandle},
	"RememberAboutProjectParams.Category":    {knowmind.MaxCategoryChars},
	"RememberAboutProjectParams.Observation": {knowmind.MaxObservationChars},
	"RememberAboutProjectParams.Project":     {knowmind.MaxProjectHandle},
	"RememberAboutUserParams.Category":       {knowmind.MaxCategoryChars},
	"RememberAboutUserParams.Observation":    {knowmind.MaxObservationChars},
	"RenameNoteParams.ID":                    {knowmind.MaxIDChars},
	"RenameNoteParams.Title":                 {knowmind.MaxTitleChars},
	"RenameNoteParams.VersionToken":          {knowmind.MaxVersionTokenChars},
	"ReviewDraftParams.DraftID":              {knowmind.MaxIDChars},
	"ReviewDraftParams.Text":                 {knowmind.MaxFactChars},
	"SearchParams.Limit":                     {knowmind.MaxSearchLimit},
	"SearchParams.Path":                      {knowmind.MaxNotePathChars},
	"SearchParams.Project":                   {knowmind.MaxProjectHandle},
	"SearchParams.Query":                     {knowmind.RecallMaxQueryChars},
	"SearchParams.Tag":                       {knowmind.MaxTagChars},
	"SetGoalParams.Text":                     {knowmind.MaxGoalChars},
	"StartSessionParams.Project":             {knowmind.MaxProjectHandle},
	"StoreMemoriesParams.Memories":           {knowmind.MaxStoreMemoriesItems},
	"StoreMemoryParams.Entities":             {knowmind.MaxEntitiesPerFact},
	"StoreMemoryParams.Sequence":             {knowmind.MaxSequenceChars},
	"StoreMemoryParams.Source":               {knowmind.MaxSourceChars},
	"StoreMemoryParams.Tags":                 {knowmind.MaxTags, knowmind.MaxTagChars},
	"StoreMemoryParams.Title":                {knowmind.MaxTitleChars},
	"TriggerParam.Category":                  {knowmind.MaxCategoryChars},
	"TriggerParam.Tags":                      {knowmind.MaxGoalTags, knowmind.MaxTagChars},
	"TriggerParam.Words":                     {knowmind.MaxGoalWords, knowmind.MaxGoalWordChars},
	"UnlinkParams.FromID":                    {knowmind.MaxIDChars},
	"UnlinkParams.RelType":                   {shapes.MaxNameLen},
	"UnlinkParams.ToID":                      {knowmind.MaxIDChars},
	"UpdateFactParams.NewTitle":              {knowmind.MaxTitleChars},
	"UpdateFactParams.TargetID":              {knowmind.MaxIDChars},
	"UpdateFactParams.UpdateReason":          {knowmind.MaxUpdateReasonChars},
	"UploadDocumentParams.Source":            {knowmind.MaxSourceChars},
	"UploadDocumentParams.Title":             {knowmind.MaxTitleChars},
	"LinkParams.ToTitle":                     {knowmind.MaxTitleChars},
	"LinkParams.Confidence":                  {knowmind.MaxConfidence},
	"RecallParams.MinScore":                  {knowmind.RecallMaxScore},
	"RecallAtTimeParams.MinScore":            {knowmind.RecallMaxScore},
	"ContextParams.MinScore":                 {knowmind.RecallMaxScore},
	"RetrieveParams.MinScore":                {knowmind.RecallMaxScore},
	"SearchParams.MinScore":                  {knowmind.RecallMaxScore},
	"LinkParams.SourceID":                    {knowmind.MaxIDChars},
	"LinkParams.TargetID":                    {knowmind.MaxIDChars},
	"LinkParams.RelationType":                {shapes.MaxNameLen},
	"LinkMetadata.Reason":                    {knowmind.MaxEdgeReasonChars},
	"RenameProjectParams.Project":            {knowmind.MaxProjectHandle},
	"RenameProjectParams.Handle":             {knowmind.MaxProjectHandle},
	"RenameProjectParams.Name":               {knowmind.MaxProjectNameChars},
	"ReplayParams.Timestamp":                 {knowmind.MaxTimestampChars},
	"StoreMemoryParams.OccurredAt":           {knowmind.MaxTimestampChars},
	"ReplayParams.Query":                     {knowmind.RecallMaxQueryChars},
	"ReplayParams.Category":                  {knowmind.MaxFilterChars},
	"ReplayParams.EntityType":                {knowmind.MaxFilterChars},
	"ReplayParams.Limit":                     {knowmind.ReplayMaxLimit},
	"RetrieveParams.Query":                   {knowmind.RecallMaxQueryChars},
	"RetrieveParams.Limit":                   {knowmind.RetrieveMaxLimit},
	"RetrieveParams.Category":                {knowmind.MaxFilterChars},
	"RetrieveParams.EntityType":              {knowmind.MaxFilterChars},
	"RetrieveParams.StartMemoryID":           {knowmind.MaxIDChars},
	"RetrieveParams.RelationTypes":           {knowmind.GraphMaxRelationTypes, shapes.MaxNameLen},
	"RetrieveParams.MaxDepth":                {knowmind.GraphMaxDepth},
}

var maxRule = regexp.MustCompile(`(?:^|,)max=(\d+)`)

// TestParamLimitsAreTheDomainsConstants reads every struct of this package's source (the
// tools' params) and checks each validate tag's max= against paramLimits.
func TestParamLimitsAreTheDomainsConstants(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if field.Tag == nil || len(field.Names) == 0 {
					continue
				}
				tag, _ := strconv.Unquote(field.Tag.Value)
				rules := reflect.StructTag(tag).Get("validate")
				var got []int
				for _, m := range maxRule.FindAllStringSubmatch(rules, -1) {
					n, _ := strconv.Atoi(m[1])
					got = append(got, n)
				}
				if len(got) == 0 {
					continue
				}
				key := ts.Name.Name + "." + field.Names[0].Name
				seen[key] = true
				want, ok := paramLimits[key]
				if !ok {
					t.Errorf("%s: validate %q has no entry in paramLimits: name the domain constant its max= is", key, rules)
				} else if !slices.Equal(got, want) {
					t.Errorf("%s: validate %q says max %v, the domain's constants are %v", key, rules, got, want)
				}
			}
			return true
		})
	}
	if len(seen) < 90 {
		t.Fatalf("found only %d limited fields: is the parse reading the tools' files?", len(seen))
	}
	for key := range paramLimits {
		if !seen[key] {
			t.Errorf("paramLimits names %s, which has no validate max= any more", key)
		}
	}
}
