package jsonschema

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Drafts 4, 6 and 7 assert "format" for the formats below (2019-09 and
// 2020-12 only annotate); an unknown format name asserts nothing. Each
// check passes every value that is not a string.
type formatCheck func(s string) error

var formatChecks = map[string]formatCheck{
	"json-pointer":          checkJSONPointer,
	"relative-json-pointer": checkRelativeJSONPointer,
	"uuid":                  checkUUID,
	"duration":              checkDuration,
	"period":                checkPeriod,
	"ipv4":                  checkIPv4,
	"ipv6":                  checkIPv6,
	"hostname":              checkHostname,
	"email":                 checkEmail,
	"date":                  checkDate,
	"time":                  checkTime,
	"date-time":             checkDateTime,
	"uri":                   checkURI,
	"iri":                   checkURI,
	"uri-reference":         checkURIReference,
	"iri-reference":         checkURIReference,
	"uri-template":          checkURITemplate,
	"semver":                checkSemver,
	"regex":                 checkRegex,
}

// formatError is a format failure whose text is formatted for English
// when shown (numbers as message.Printer writes them).
type formatError struct {
	format string
	args   []any
}

func (e *formatError) Error() string { return fmt.Sprintf(e.format, e.args...) }

func ferr(format string, args ...any) error { return &formatError{format, args} }

func formatErrorText(err error) string {
	if e, ok := err.(*formatError); ok {
		return english.Sprintf(e.format, e.args...)
	}
	return err.Error()
}

func checkRegex(s string) error {
	_, err := regexp.Compile(s)
	return err
}

func checkJSONPointer(s string) error {
	if s == "" {
		return nil
	}
	if s[0] != '/' {
		return ferr("not starting with /")
	}
	for _, tok := range strings.Split(s[1:], "/") {
		tilde := false
		for _, r := range tok {
			if tilde {
				if r != '0' && r != '1' {
					return ferr("~ must be followed by 0 or 1")
				}
				tilde = false
				continue
			}
			if r == '~' {
				tilde = true
				continue
			}
			if r == '/' || r == '~' || r > 0x10FFFF {
				return ferr("invalid character %q", r)
			}
		}
		if tilde {
			return ferr("~ must be followed by 0 or 1")
		}
	}
	return nil
}

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func checkRelativeJSONPointer(s string) error {
	n := leadingDigits(s)
	if n == 0 {
		return ferr("must start with non-negative integer")
	}
	if n > 1 && s[0] == '0' {
		return ferr("starts with zero")
	}
	if s[n:] == "#" {
		return nil
	}
	return checkJSONPointer(s[n:])
}

func checkUUID(s string) error {
	sizes := [5]int{8, 4, 4, 4, 12}
	parts := strings.Split(s, "-")
	if len(parts) != len(sizes) {
		return ferr("must have %d elements", len(sizes))
	}
	for i, p := range parts {
		if len(p) != sizes[i] {
			return ferr("element %d must be %d characters long", i+1, sizes[i])
		}
		for _, r := range p {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
				return ferr("non-hex character %q", r)
			}
		}
	}
	return nil
}

func checkDuration(s string) error {
	rest, ok := strings.CutPrefix(s, "P")
	if !ok {
		return ferr("must start with P")
	}
	if rest == "" {
		return ferr("nothing after P")
	}
	if weeks, ok := strings.CutSuffix(rest, "W"); ok {
		if weeks == "" {
			return ferr("no number in week")
		}
		if leadingDigits(weeks) != len(weeks) {
			return ferr("invalid week")
		}
		return nil
	}
	unitSets := [2]string{"YMD", "HMS"}
	for i, part := range strings.Split(rest, "T") {
		if i > 0 && part == "" {
			return ferr("no time elements")
		}
		if i >= len(unitSets) {
			return ferr("more than one T")
		}
		left := unitSets[i]
		for part != "" {
			n := leadingDigits(part)
			if n == 0 {
				return ferr("missing number")
			}
			part = part[n:]
			if part == "" {
				return ferr("missing unit")
			}
			u := part[0]
			at := strings.IndexByte(left, u)
			if at < 0 {
				if strings.IndexByte(unitSets[i], u) >= 0 {
					return ferr("unit %q out of order", u)
				}
				return ferr("invalid unit %q", u)
			}
			left = left[at+1:]
			part = part[1:]
		}
	}
	return nil
}

func checkIPv4(s string) error {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return ferr("expected four decimals")
	}
	for _, p := range parts {
		if len(p) > 1 && p[0] == '0' {
			return ferr("leading zeros")
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return err
		}
		if n < 0 || n > 255 {
			return ferr("decimal must be between 0 and 255")
		}
	}
	return nil
}

func checkIPv6(s string) error {
	if !strings.Contains(s, ":") {
		return ferr("missing colon")
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return err
	}
	if a.Zone() != "" {
		return ferr("zone id is not a part of ipv6 address")
	}
	return nil
}

func checkHostname(s string) error {
	s = strings.TrimSuffix(s, ".")
	if len(s) > 253 {
		return ferr("more than 253 characters long")
	}
	for _, label := range strings.Split(s, ".") {
		if len(label) < 1 || len(label) > 63 {
			return ferr("label must be 1 to 63 characters long")
		}
		if label[0] == '-' {
			return ferr("label starts with hyphen")
		}
		if label[len(label)-1] == '-' {
			return ferr("label ends with hyphen")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return ferr("invalid character %q", r)
			}
		}
	}
	return nil
}

func checkEmail(s string) error {
	if len(s) > 254 {
		return ferr("more than 255 characters long")
	}
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return ferr("missing @")
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return ferr("local part more than 64 characters long")
	}
	if len(local) > 1 && local[0] == '"' && local[len(local)-1] == '"' {
		if strings.ContainsAny(local[1:len(local)-1], `\"`) {
			return ferr("backslash and quote are not allowed within quoted local part")
		}
	} else {
		switch {
		case strings.HasPrefix(local, "."):
			return ferr("starts with dot")
		case strings.HasSuffix(local, "."):
			return ferr("ends with dot")
		case strings.Contains(local, ".."):
			return ferr("consecutive dots")
		}
		for _, r := range local {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".!#$%&'*+-/=?^_`{|}~", r)) {
				return ferr("invalid character %q", r)
			}
		}
	}
	if len(domain) >= 2 && domain[0] == '[' && domain[len(domain)-1] == ']' {
		ip := domain[1 : len(domain)-1]
		if v6, ok := strings.CutPrefix(ip, "IPv6:"); ok {
			if err := checkIPv6(v6); err != nil {
				return ferr("invalid ipv6 address: %v", err)
			}
			return nil
		}
		if err := checkIPv4(ip); err != nil {
			return ferr("invalid ipv4 address: %v", err)
		}
		return nil
	}
	if err := checkHostname(domain); err != nil {
		return ferr("invalid domain: %v", err)
	}
	return nil
}

func checkDate(s string) error {
	_, err := time.Parse("2006-01-02", s)
	return err
}

func checkTime(s string) error {
	if len(s) < 9 {
		return ferr("less than 9 characters long")
	}
	if s[2] != ':' || s[5] != ':' {
		return ferr("missing colon in correct place")
	}
	var hms [3]int
	for i, tok := range strings.SplitN(s[:8], ":", 3) {
		n, err := strconv.Atoi(tok)
		if err != nil {
			return ferr("invalid hour/min/sec")
		}
		if n < 0 {
			return ferr("non-positive hour/min/sec")
		}
		hms[i] = n
	}
	h, m, sec := hms[0], hms[1], hms[2]
	if h > 23 || m > 59 || sec > 60 {
		return ferr("hour/min/sec out of range")
	}
	rest := s[8:]
	if frac, ok := strings.CutPrefix(rest, "."); ok {
		n := leadingDigits(frac)
		if n == 0 {
			return ferr("no digits in second fraction")
		}
		rest = frac[n:]
	}
	if rest != "z" && rest != "Z" {
		if len(rest) != 6 {
			return ferr("offset must be 6 characters long")
		}
		var sign int
		switch rest[0] {
		case '+':
			sign = -1
		case '-':
			sign = 1
		default:
			return ferr("offset must begin with plus/minus")
		}
		rest = rest[1:]
		if rest[2] != ':' {
			return ferr("missing colon in offset in correct place")
		}
		var zhm [2]int
		for i, tok := range strings.SplitN(rest, ":", 2) {
			n, err := strconv.Atoi(tok)
			if err != nil {
				return ferr("invalid hour/min in offset")
			}
			if n < 0 {
				return ferr("non-positive hour/min in offset")
			}
			zhm[i] = n
		}
		if zhm[0] > 23 || zhm[1] > 59 {
			return ferr("hour/min in offset out of range")
		}
		mins := h*60 + m + sign*(zhm[0]*60+zhm[1])
		if mins < 0 {
			mins += 24 * 60
		}
		h, m = mins/60, mins%60
	}
	if sec >= 60 && (h != 23 || m != 59) {
		return ferr("invalid leap second")
	}
	return nil
}

func checkDateTime(s string) error {
	if len(s) < 20 {
		return ferr("less than 20 characters long")
	}
	if s[10] != 't' && s[10] != 'T' {
		return ferr("11th character must be t or T")
	}
	if err := checkDate(s[:10]); err != nil {
		return ferr("invalid date element: %v", err)
	}
	if err := checkTime(s[11:]); err != nil {
		return ferr("invalid time element: %v", err)
	}
	return nil
}

// parseURL is url.Parse plus the check of a bracketed IPv6 host.
func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if host := u.Hostname(); strings.Contains(host, ":") {
		if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") {
			return nil, ferr("ipv6 address not enclosed in brackets")
		}
		if err := checkIPv6(host); err != nil {
			return nil, ferr("invalid ipv6 address: %v", err)
		}
	}
	return u, nil
}

func checkURI(s string) error {
	u, err := parseURL(s)
	if err != nil {
		return err
	}
	if !u.IsAbs() {
		return ferr("relative url")
	}
	return nil
}

func checkURIReference(s string) error {
	if strings.Contains(s, `\`) {
		return ferr(`contains \`)
	}
	_, err := parseURL(s)
	return err
}

func checkURITemplate(s string) error {
	u, err := parseURL(s)
	if err != nil {
		return err
	}
	for _, tok := range strings.Split(u.RawPath, "/") {
		tok, err = url.PathUnescape(tok)
		if err != nil {
			return ferr("percent decode failed: %v", err)
		}
		open := false
		for _, r := range tok {
			switch r {
			case '{':
				if open {
					return ferr("nested curly braces")
				}
				open = true
			case '}':
				if !open {
					return ferr("nested curly braces")
				}
				open = false
			}
		}
		if open {
			return ferr("no matching closing brace")
		}
	}
	return nil
}

func checkPeriod(s string) error {
	slash := strings.IndexByte(s, '/')
	if slash < 0 {
		return ferr("missing slash")
	}
	start, end := s[:slash], s[slash+1:]
	if strings.HasPrefix(start, "P") {
		if err := checkDuration(start); err != nil {
			return ferr("invalid start duration: %v", err)
		}
		if err := checkDateTime(end); err != nil {
			return ferr("invalid end date-time: %v", err)
		}
		return nil
	}
	if err := checkDateTime(start); err != nil {
		return ferr("invalid start date-time: %v", err)
	}
	if strings.HasPrefix(end, "P") {
		if err := checkDuration(end); err != nil {
			return ferr("invalid end duration: %v", err)
		}
	} else if err := checkDateTime(end); err != nil {
		return ferr("invalid end date-time: %v", err)
	}
	return nil
}

func checkSemver(s string) error {
	isAlnum := func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' }
	if plus := strings.IndexByte(s, '+'); plus >= 0 {
		build := s[plus+1:]
		if build == "" {
			return ferr("build is empty")
		}
		for _, id := range strings.Split(build, ".") {
			if id == "" {
				return ferr("build identifier is empty")
			}
			for _, r := range id {
				if !(r >= '0' && r <= '9' || isAlnum(r)) {
					return ferr("invalid character %q in build identifier", r)
				}
			}
		}
		s = s[:plus]
	}
	if dash := strings.IndexByte(s, '-'); dash >= 0 {
		for _, id := range strings.Split(s[dash+1:], ".") {
			if id == "" {
				return ferr("pre-release identifier is empty")
			}
			numeric := true
			for _, r := range id {
				switch {
				case r >= '0' && r <= '9':
				case isAlnum(r):
					numeric = false
				default:
					return ferr("invalid character %q in pre-release identifier", r)
				}
			}
			if numeric && len(id) > 1 && id[0] == '0' {
				return ferr("pre-release numeric identifier starts with zero")
			}
		}
		s = s[:dash]
	}
	core := strings.Split(s, ".")
	if len(core) != 3 {
		return ferr("versionCore must have 3 numbers separated by dot")
	}
	for i, part := range core {
		name := [3]string{"major", "minor", "patch"}[i]
		if part == "" {
			return ferr("%s is empty", name)
		}
		if len(part) > 1 && part[0] == '0' {
			return ferr("%s starts with zero", name)
		}
		if leadingDigits(part) != len(part) {
			return ferr("%s contains non-digit", name)
		}
	}
	return nil
}
