package builtin

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/pi-go/pi/runtime/tool"
)

// Image limits: the longest side the model gets, the most base64 bytes of
// one image (headroom below a 5MB provider limit), the largest file and the
// most pixels we try to decode.
const (
	imageMaxSide       = 2000
	imageMaxBase64     = 4.5 * 1024 * 1024
	imageMaxFileBytes  = 64 << 20
	imageMaxPixels     = 100_000_000
	imageJPEGQuality   = 80
	imageShrinkPercent = 75
)

// detectImageMIME tells a supported image from its first bytes.
func detectImageMIME(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && bytes.Equal(b[:4], []byte("RIFF")) && bytes.Equal(b[8:12], []byte("WEBP")):
		return "image/webp"
	}
	return ""
}

func decodeConfig(data []byte, mime string) (image.Config, error) {
	r := bytes.NewReader(data)
	switch mime {
	case "image/png":
		return png.DecodeConfig(r)
	case "image/jpeg":
		return jpeg.DecodeConfig(r)
	case "image/gif":
		return gif.DecodeConfig(r)
	default:
		return webp.DecodeConfig(r)
	}
}

func decodeImage(data []byte, mime string) (image.Image, error) {
	r := bytes.NewReader(data)
	switch mime {
	case "image/png":
		return png.Decode(r)
	case "image/jpeg":
		return jpeg.Decode(r)
	case "image/gif":
		return gif.Decode(r)
	default:
		return webp.Decode(r)
	}
}

// readImage returns an image file as a text block and an image block,
// downscaled (and re-encoded as PNG or JPEG) when its longest side is over
// 2000 px or it is too large to send. A JPEG that is re-encoded is first
// turned upright by its EXIF orientation (the new file carries no EXIF); one
// sent as it is keeps its EXIF for the provider to honour.
func readImage(f io.ReadSeeker, size int64, mime string) (tool.Result, error) {
	omitted := func(why string) (tool.Result, error) {
		return tool.TextResult(fmt.Sprintf("Read image file [%s]\n[Image omitted: %s]", mime, why)), nil
	}
	if size > imageMaxFileBytes {
		return omitted(fmt.Sprintf("the file is %s, too large to process.", FormatSize(int(size))))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return tool.Result{}, fmt.Errorf("read image: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return tool.Result{}, fmt.Errorf("read image: %w", err)
	}
	fits := base64.StdEncoding.EncodedLen(len(data)) < imageMaxBase64
	cfg, cfgErr := decodeConfig(data, mime)
	if fits && (cfgErr != nil || (cfg.Width <= imageMaxSide && cfg.Height <= imageMaxSide)) {
		// Small enough: sent as it is, even when we cannot decode it.
		return imageResult(mime, "", data), nil
	}
	if cfgErr != nil {
		return omitted("could not be resized below the inline image size limit.")
	}
	if cfg.Width*cfg.Height > imageMaxPixels {
		return omitted(fmt.Sprintf("%dx%d is too many pixels to resize.", cfg.Width, cfg.Height))
	}
	img, err := decodeImage(data, mime)
	if err != nil {
		return omitted("could not be resized below the inline image size limit.")
	}
	if mime == "image/jpeg" {
		img = applyOrientation(img, jpegOrientation(data))
	}
	ow, oh := img.Bounds().Dx(), img.Bounds().Dy()
	w, h := ow, oh
	if w > imageMaxSide {
		h = int(math.Round(float64(h) * imageMaxSide / float64(w)))
		w = imageMaxSide
	}
	if h > imageMaxSide {
		w = int(math.Round(float64(w) * imageMaxSide / float64(h)))
		h = imageMaxSide
	}
	w, h = max(w, 1), max(h, 1)
	for {
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.CatmullRom.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Over, nil)
		if out, outMime, ok := encodeWithin(dst); ok {
			note := fmt.Sprintf("[Image: original %dx%d, displayed at %dx%d. Multiply coordinates by %.2f to map to original image.]",
				ow, oh, w, h, float64(ow)/float64(w))
			return imageResult(outMime, note, out), nil
		}
		if w == 1 && h == 1 {
			return omitted("could not be resized below the inline image size limit.")
		}
		w, h = max(1, w*imageShrinkPercent/100), max(1, h*imageShrinkPercent/100)
	}
}

// encodeWithin encodes img as PNG (fast compression: the default level
// costs seconds on a photo-like 2000 px image), else as JPEG at falling qualities, and
// returns the first encoding small enough to send.
func encodeWithin(img image.Image) ([]byte, string, bool) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if enc.Encode(&b, img) == nil && base64.StdEncoding.EncodedLen(b.Len()) < imageMaxBase64 {
		return b.Bytes(), "image/png", true
	}
	for _, q := range []int{imageJPEGQuality, 85, 70, 55, 40} {
		b.Reset()
		if jpeg.Encode(&b, img, &jpeg.Options{Quality: q}) == nil && base64.StdEncoding.EncodedLen(b.Len()) < imageMaxBase64 {
			return b.Bytes(), "image/jpeg", true
		}
	}
	return nil, "", false
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
