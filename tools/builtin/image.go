package builtin

import (
	"encoding/base64"
	"fmt"
	"io"

	"github.com/pi-go/pi/internal/imageutil"
	"github.com/pi-go/pi/internal/output"
	"github.com/pi-go/pi/runtime/tool"
)

// readImage returns an image file as a text block and an image block,
// downscaled (and re-encoded as PNG or JPEG) when its longest side is over
// 2000 px or it is too large to send (imageutil.Fit).
func readImage(f io.ReadSeeker, size int64, mime string) (tool.Result, error) {
	omitted := func(why string) (tool.Result, error) {
		return tool.TextResult(fmt.Sprintf("Read image file [%s]\n[Image omitted: %s]", mime, why)), nil
	}
	if size > imageutil.MaxFileBytes {
		return omitted(fmt.Sprintf("the file is %s, too large to process.", output.FormatSize(int(size))))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tool.Result{}, fmt.Errorf("read image: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read image: %w", err)
	}
	fit := imageutil.Fit(data, mime)
	switch {
	case fit.Omitted != "":
		return omitted(fit.Omitted)
	case fit.Resized:
		note := fmt.Sprintf("[Image: original %dx%d, displayed at %dx%d. Multiply coordinates by %.2f to map to original image.]",
			fit.OrigWidth, fit.OrigHeight, fit.Width, fit.Height, float64(fit.OrigWidth)/float64(fit.Width))
		return imageResult(fit.MIME, note, fit.Data), nil
	}
	return imageResult(fit.MIME, "", fit.Data), nil
}

func imageResult(mime, note string, data []byte) tool.Result {
	text := fmt.Sprintf("Read image file [%s]", mime)
	if note != "" {
		text += "\n" + note
	}
	return tool.Result{Content: []tool.ContentBlock{
		tool.Text(text),
		tool.Image(base64.StdEncoding.EncodeToString(data), mime),
	}}
}
