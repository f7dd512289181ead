package session

import (
	"encoding/json"
	"fmt"
)

// migrate brings the lines of a version 1 or 2 file (header first) to
// version 3, as the reference does:
//
//   - 1 → 2: every entry gets a fresh 8-hex id and the previous entry's id
//     as parentId (a linear chain), and a compaction's firstKeptEntryIndex
//     (an index into the file's lines) becomes the firstKeptEntryId of that
//     line's entry;
//   - 2 → 3: the message role hookMessage becomes custom.
//
// It returns the migrated lines (fields not named above are kept as they
// were), or ok false when the file is already version 3 or newer.
func migrate(lines [][]byte) (out [][]byte, ok bool, err error) {
	if len(lines) == 0 {
		return nil, false, nil
	}
	var head struct {
		Version *float64 `json:"version"`
	}
	if err := json.Unmarshal(lines[0], &head); err != nil {
		return nil, false, fmt.Errorf("line 1: %w", err)
	}
	if head.Version != nil && int(*head.Version) >= Version {
		return nil, false, nil
	}
	objs := make([]map[string]any, 0, len(lines))
	for _, l := range lines {
		var o map[string]any
		if json.Unmarshal(l, &o) == nil { // malformed lines are dropped, as the reference does
			objs = append(objs, o)
		}
	}
	if len(objs) == 0 {
		return nil, false, nil
	}
	version := 1
	if v, isNum := objs[0]["version"].(float64); isNum {
		version = int(v)
	}
	if version >= Version {
		return nil, false, nil
	}
	if version < 2 {
		ids := map[string]bool{}
		var prev any // nil: JSON null
		for _, o := range objs {
			if o["type"] == TypeSession {
				o["version"] = 2
				continue
			}
			id := newEntryID(func(s string) bool { return ids[s] })
			ids[id] = true
			o["id"] = id
			o["parentId"] = prev
			prev = id
		}
		for _, o := range objs {
			if o["type"] != TypeCompaction {
				continue
			}
			if idx, isNum := o["firstKeptEntryIndex"].(float64); isNum {
				j := int(idx)
				if j >= 0 && j < len(objs) && objs[j]["type"] != TypeSession {
					o["firstKeptEntryId"] = objs[j]["id"]
				}
				delete(o, "firstKeptEntryIndex")
			}
		}
	}
	for _, o := range objs {
		if o["type"] == TypeSession {
			o["version"] = Version
			continue
		}
		if o["type"] == TypeMessage {
			if m, isObj := o["message"].(map[string]any); isObj && m["role"] == "hookMessage" {
				m["role"] = RoleCustom
			}
		}
	}
	out = make([][]byte, len(objs))
	for i, o := range objs {
		b, err := marshal(o)
		if err != nil {
			return nil, false, fmt.Errorf("line %d: %w", i+1, err)
		}
		out[i] = b
	}
	return out, true, nil
}
