package extspec

import (
	"strings"
	"testing"
)

func TestParseHTTPGrant(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want: the grant written back, or "error: ..."
	}{
		{"https://api.example.com/v1/*", "https://api.example.com/v1/*"},
		{"https://API.Example.com/v1/*", "https://api.example.com/v1/*"},
		{"https://api.example.com:443/x", "https://api.example.com/x"},
		{"http://127.0.0.1:8080/*", "http://127.0.0.1:8080/*"},
		{"http://[::1]:8080/a", "http://[::1]:8080/a"},
		{"https://api.example.com", "https://api.example.com/"},
		{"https://api.example.com/", "https://api.example.com/"},
		{"https://api.example.com*", "error: the path must start with /"},
		{"https://api.example.com/v1/*/x", "error: a * may only stand at the end"},
		{"https://api.example.com/v1/**", "error: a * may only stand at the end"},
		{"ftp://api.example.com/", "error: the scheme must be http or https"},
		{"api.example.com/v1/*", "error: the scheme must be http or https"},
		{"https:///v1/*", "error: no host"},
		{"https://user:pw@api.example.com/*", "error: user:password@ is not allowed"},
		{"https://api.example.com/v1?x=1", "error: a query is not matched"},
		{"https://api.example.com/v1#f", "error: a fragment is not allowed"},
		{"https://api.example.com/v1/../admin/*", "error: the path is not in canonical form"},
		{"https://api.example.com/v1/%7Euser/*", `error: the path is not in canonical form (write "/v1/~user/")`},
		{"https://api.example.com/v1%2Fadmin/*", "error: an encoded slash"},
		{"https://api.example.com:x/", "error:"},
		{"https://api.example.com:/", "error: an empty port"},
	} {
		g, err := ParseHTTPGrant(tc.in)
		if want, isErr := strings.CutPrefix(tc.want, "error: "); isErr || tc.want == "error:" {
			if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(want, "error:")) {
				t.Errorf("ParseHTTPGrant(%q) = %v, %v; want an error with %q", tc.in, g, err, want)
			}
			continue
		}
		if err != nil || g.String() != tc.want {
			t.Errorf("ParseHTTPGrant(%q) = %q, %v; want %q", tc.in, g.String(), err, tc.want)
		}
	}
}

// TestHTTPAllowed tries the ways around a grant an attacker would: other
// hosts that contain the granted one, ports, schemes, dot segments plain
// and encoded, encoded slashes, user info, case.
func TestHTTPAllowed(t *testing.T) {
	grants := []string{"https://api.example.com/v1/*", "http://127.0.0.1:8080/exact"}
	for _, tc := range []struct {
		url   string
		allow bool
	}{
		{"https://api.example.com/v1/items", true},
		{"https://api.example.com/v1/", true},
		{"https://API.EXAMPLE.COM/v1/x", true},
		{"https://api.example.com:443/v1/x", true},
		{"https://api.example.com/v1/x?token=1#frag", true},
		{"https://api.example.com/v1/a/./b", true},
		{"https://api.example.com/v1/%61", true},
		{"https://api.example.com/v1", false},
		{"https://api.example.com/v10", false},
		{"https://api.example.com/v1/../admin", false},
		{"https://api.example.com/v1/%2e%2e/admin", false},
		{"https://api.example.com/v1/%2E%2E/admin", false},
		{"https://api.example.com/v1/..%2fadmin", false},
		{"https://api.example.com/v1/..%5cadmin", false},
		{"https://api.example.com/v1/..\\admin", false},
		{"https://api.example.com/V1/x", false},
		{"http://api.example.com/v1/x", false},
		{"https://api.example.com:8443/v1/x", false},
		{"https://api.example.com.evil.com/v1/x", false},
		{"https://evil.com/api.example.com/v1/x", false},
		{"https://api.example.com@evil.com/v1/x", false},
		{"https://evil.com#@api.example.com/v1/x", false},
		{"https://api.example.com./v1/x", false},
		{"https://xapi.example.com/v1/x", false},
		{"http://127.0.0.1:8080/exact", true},
		{"http://127.0.0.1:8080/exact?q", true},
		{"http://127.0.0.1:8080/exact/", false},
		{"http://127.0.0.1:8080/exactly", false},
		{"http://127.0.0.1/exact", false},
		{"http://localhost:8080/exact", false},
		{"http://[::ffff:127.0.0.1]:8080/exact", false},
		{"file:///etc/passwd", false},
		{"javascript:alert(1)", false},
	} {
		u, err := CanonicalURL(tc.url)
		got := err == nil && HTTPAllowed(grants, u)
		if got != tc.allow {
			t.Errorf("HTTPAllowed(%q) = %v (canonical %v, %v), want %v", tc.url, got, u, err, tc.allow)
		}
	}
	// What is fetched is what was checked.
	u, err := CanonicalURL("https://api.example.com/v1/a/../b/%7e/%41?q=1#x")
	if err != nil || u.String() != "https://api.example.com/v1/b/~/A?q=1" {
		t.Errorf("CanonicalURL = %v, %v", u, err)
	}
	if HTTPAllowed(nil, u) {
		t.Error("no grants allow something")
	}
}

func TestGrantKinds11(t *testing.T) {
	var g Grants
	for _, kv := range []string{"http=https://api.example.com/v1/*", "tool=read", "tool=grep"} {
		if err := g.AddFlag(kv); err != nil {
			t.Fatalf("AddFlag(%q): %v", kv, err)
		}
	}
	if strings.Join(g.HTTP, "|") != "https://api.example.com/v1/*" || strings.Join(g.Tools, "|") != "read|grep" {
		t.Errorf("grants %+v", g)
	}
	for _, tt := range []struct{ kv, want string }{
		{"http=https://x/*/y", "a * may only stand at the end"},
		{"http=ftp://x/", "the scheme must be http or https"},
		{"tool=read me", "is not a tool name"},
		{"tool=", "want KIND=VALUE"},
		{"tools=x/y", "is not a tool name"},
	} {
		if err := g.AddFlag(tt.kv); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("AddFlag(%q) = %v, want %q", tt.kv, err, tt.want)
		}
	}
	if err := (Grants{HTTP: []string{"https://a/*"}, Tools: []string{"x y"}}).Check(); err == nil || !strings.Contains(err.Error(), "grants.tools[0]") {
		t.Errorf("Check = %v", err)
	}
	if err := (Limits{KVMB: 0}).Check(); err != nil {
		t.Error(err)
	}
	if err := (Limits{KVMB: MaxKVMB + 1}).Check(); err == nil || !strings.Contains(err.Error(), "limits.kv_mb") {
		t.Errorf("kv_mb over the max: %v", err)
	}
	if (Limits{}).KVBytes() != 4<<20 || (Limits{KVMB: 2}).KVBytes() != 2<<20 {
		t.Error("KVBytes")
	}
}
