package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/knowmind/knowmind"
)

// NamespaceCredentials are what an analyst types into Ratel's login dialog
// to explore one tenant's graph: a tenant is a Dgraph namespace, and a
// login into it sees that namespace and nothing else (Dgraph enforces it,
// not our queries). See docs/analysts.md.
type NamespaceCredentials struct {
	Tenant    string
	Namespace uint64
	User      string // the namespace's guardian, "groot"
	Password  string // derived from the service secret; stable while it is
}

// NamespaceCredentials returns the login of an existing tenant's namespace.
// It creates nothing: an unknown tenant is ENOTFOUND. The password is the
// one the service itself logs in with, so it cannot be rotated for analysts
// alone; hand it out only to people allowed to read (and write) the tenant.
func (c *Client) NamespaceCredentials(ctx context.Context, tenant string) (NamespaceCredentials, error) {
	if err := ValidTenantName(tenant); err != nil {
		return NamespaceCredentials{}, err
	}
	ns, found, err := c.lookupNamespace(ctx, tenant)
	if err != nil {
		return NamespaceCredentials{}, err
	}
	if !found {
		return NamespaceCredentials{}, knowmind.Errorf(knowmind.ENOTFOUND, "tenant %q does not exist", tenant)
	}
	return NamespaceCredentials{Tenant: tenant, Namespace: ns, User: "groot", Password: c.namespacePassword(tenant)}, nil
}

// analystUser and analystGroup are the read-only login AnalystLogin keeps
// in every tenant namespace it is asked for.
const (
	analystUser  = "analyst"
	analystGroup = "analysts"
	permRead     = 4 // Dgraph ACL: read=4, write=2, modify=1
)

// AnalystLogin (re)creates the read-only analyst login of a tenant's
// namespace and returns it with a new random password (so running it again
// rotates the password). The user "analyst" is in group "analysts", which
// may read every predicate the namespace has now; predicates added later
// (a new relation type in a shape file) are readable after the next call.
// It cannot write, delete or change the schema: Dgraph refuses.
func (c *Client) AnalystLogin(ctx context.Context, tenant string) (NamespaceCredentials, error) {
	t, err := c.Tenant(ctx, tenant, false)
	if err != nil {
		return NamespaceCredentials{}, err
	}
	preds, err := readablePredicates(ctx, t)
	if err != nil {
		return NamespaceCredentials{}, err
	}
	rules := make([]map[string]any, len(preds))
	for i, p := range preds {
		rules[i] = map[string]any{"predicate": p, "permission": permRead}
	}
	password, err := randomPassword()
	if err != nil {
		return NamespaceCredentials{}, err
	}
	// The namespace guardian's token: /admin then acts on this namespace.
	jwt := t.dg.GetJwt().AccessJwt
	var found struct {
		Data struct {
			Group *struct{ Name string } `json:"getGroup"`
			User  *struct{ Name string } `json:"getUser"`
		} `json:"data"`
		Errors []struct{ Message string } `json:"errors"`
	}
	if err := c.adminGraphQL(ctx, c.cfg.RPCTimeout, jwt, `query($g: String!, $u: String!) { getGroup(name: $g) { name } getUser(name: $u) { name } }`,
		map[string]any{"g": analystGroup, "u": analystUser}, &found); err != nil {
		return NamespaceCredentials{}, err
	}
	if len(found.Errors) > 0 {
		return NamespaceCredentials{}, fmt.Errorf("analyst login of %q: %s", tenant, found.Errors[0].Message)
	}
	type step struct {
		query string
		vars  map[string]any
	}
	var steps []step
	if found.Data.Group == nil {
		steps = append(steps, step{`mutation($g: String!, $r: [RuleRef]) { addGroup(input: [{name: $g, rules: $r}]) { group { name } } }`,
			map[string]any{"g": analystGroup, "r": rules}})
	} else {
		// set upserts a rule per predicate: existing ones stay read-only,
		// new predicates are added.
		steps = append(steps, step{`mutation($g: String!, $r: [RuleRef!]!) { updateGroup(input: {filter: {name: {eq: $g}}, set: {rules: $r}}) { group { name } } }`,
			map[string]any{"g": analystGroup, "r": rules}})
	}
	if found.Data.User == nil {
		steps = append(steps, step{`mutation($u: String!, $pw: String!, $g: String!) { addUser(input: [{name: $u, password: $pw, groups: [{name: $g}]}]) { user { name } } }`,
			map[string]any{"u": analystUser, "pw": password, "g": analystGroup}})
	} else {
		steps = append(steps, step{`mutation($u: String!, $pw: String!) { updateUser(input: {filter: {name: {eq: $u}}, set: {password: $pw}}) { user { name } } }`,
			map[string]any{"u": analystUser, "pw": password}})
	}
	for _, s := range steps {
		var out struct {
			Errors []struct{ Message string } `json:"errors"`
		}
		if err := c.adminGraphQL(ctx, c.cfg.RPCTimeout, jwt, s.query, s.vars, &out); err != nil {
			return NamespaceCredentials{}, err
		}
		if len(out.Errors) > 0 {
			return NamespaceCredentials{}, fmt.Errorf("analyst login of %q: %s", tenant, out.Errors[0].Message)
		}
	}
	return NamespaceCredentials{Tenant: tenant, Namespace: t.Namespace, User: analystUser, Password: password}, nil
}

// readablePredicates are the namespace's own predicates plus dgraph.type
// (type() and expand() need it), the reverse of every @reverse predicate,
// and "math": Dgraph v25's ACL takes a
// math() variable for a predicate of that name and silently drops it from a
// non-guardian's query (measured: docs/queries/04-most-linked.dql returned
// nothing), so it needs a read rule like one. Dgraph's other dgraph.*
// predicates (users, groups, passwords) stay the guardian's.
func readablePredicates(ctx context.Context, t *Tenant) ([]string, error) {
	resp, err := t.dg.NewReadOnlyTxn().Query(ctx, `schema {}`)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	var out struct {
		Schema []struct {
			Predicate string `json:"predicate"`
			Reverse   bool   `json:"reverse"`
		} `json:"schema"`
	}
	if err := json.Unmarshal(resp.Json, &out); err != nil {
		return nil, err
	}
	preds := []string{"dgraph.type", "math"}
	for _, s := range out.Schema {
		if strings.HasPrefix(s.Predicate, "dgraph.") {
			continue
		}
		preds = append(preds, s.Predicate)
		// Walking an edge backwards (~FOR_CLIENT, ~Memory.chunks) is checked
		// as a predicate of its own.
		if s.Reverse {
			preds = append(preds, "~"+s.Predicate)
		}
	}
	sort.Strings(preds)
	return preds, nil
}

func randomPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
