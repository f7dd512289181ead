//go:build wasip1

// Command http-fetch is a pi extension (ABI 1.1) with a tool "fetch" that
// GETs a URL through the host's http.request (the guest has no sockets)
// and returns the response's text. The host fetches only URLs that match
// the extension's grants.http patterns, and checks every redirect against
// them too.
package main

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pi-go/pi/sdk"
)

// maxText caps the text returned to the model.
const maxText = 50_000

func init() {
	sdk.Extension("http-fetch", "1.0.0", "Fetches web pages and APIs the user granted")
	sdk.Tool(sdk.ToolSpec{
		Name:          "fetch",
		Description:   "Fetch a URL with HTTP GET and return the response body as text. Only URLs the user granted can be fetched.",
		PromptSnippet: "fetch: GET a granted URL and read the response",
	}, fetch)
}

func main() {}

type input struct {
	URL string `json:"url" description:"the URL to fetch (http or https)"`
}

func fetch(ctx *sdk.Context, in input) (sdk.Result, error) {
	resp, err := sdk.HTTP(sdk.HTTPRequest{URL: in.URL, Headers: map[string]string{"User-Agent": "pi-http-fetch/1.0"}, Timeout: 20 * time.Second})
	if err != nil {
		if he, ok := err.(*sdk.HostError); ok {
			if granted := sdk.Granted().HTTP; len(granted) > 0 {
				return sdk.ErrorText(fmt.Sprintf("%s\nGranted URL patterns: %s", he.Message, strings.Join(granted, ", "))), nil
			}
			return sdk.ErrorText(he.Message), nil
		}
		return sdk.Result{}, err
	}
	if !utf8.Valid(resp.Body) {
		return sdk.ErrorText(fmt.Sprintf("HTTP %d: a %d-byte binary body (%s), not shown", resp.Status, len(resp.Body), resp.Headers["Content-Type"])), nil
	}
	text := string(resp.Body)
	if len(text) > maxText {
		text = text[:maxText] + "\n[cut at 50000 bytes]"
	}
	r := sdk.Text(fmt.Sprintf("HTTP %d\n\n%s", resp.Status, text))
	r.IsError = resp.Status >= 400
	r.Details = map[string]any{"status": resp.Status, "bytes": len(resp.Body)}
	return r, nil
}
