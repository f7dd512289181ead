package llm

import "context"

type Responses struct {
	endpointBase
	endpoint string
}

func (p *Responses) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error) {
	return nil, nil
}

type Gemini struct {
	endpointBase
	endpoint string
}

func (p *Gemini) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (*Response, error) {
	return nil, nil
}
