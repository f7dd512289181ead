package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
)

// BodyHook sees the JSON body of a request just before it is posted and
// returns the body to post (the same, or a replacement). The caller
// (the extension host's before_provider_request hooks) keeps what pi
// decides itself, such as "stream"; the endpoint cannot change.
type BodyHook func(ctx context.Context, body []byte) []byte

type bodyHookKey struct{}

// WithBodyHook returns ctx whose requests, posted by any provider, go
// through hook first.
func WithBodyHook(ctx context.Context, hook func(ctx context.Context, body []byte) []byte) context.Context {
	if hook == nil {
		return ctx
	}
	return context.WithValue(ctx, bodyHookKey{}, BodyHook(hook))
}

// hookBody runs ctx's body hook, if any, on body; the body posted is the
// hook's answer when it is a JSON object, else body as it was.
func hookBody(ctx context.Context, body *requestBody) *requestBody {
	hook, _ := ctx.Value(bodyHookKey{}).(BodyHook)
	if hook == nil {
		return body
	}
	raw, err := io.ReadAll(body.reader())
	if err != nil {
		return body
	}
	out := bytes.TrimSpace(hook(ctx, raw))
	if len(out) == 0 || out[0] != '{' || !json.Valid(out) {
		return body
	}
	return &requestBody{parts: []bodyPart{{lit: out}}, size: int64(len(out))}
}
