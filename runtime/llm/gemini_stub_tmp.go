package llm

import (
	"context"
	"errors"
)

type Gemini struct {
	endpointBase
	endpoint string
}

func (p *Gemini) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error) {
	return nil, errors.New("not built yet")
}
