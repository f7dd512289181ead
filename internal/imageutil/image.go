// Package imageutil owns how the read tool makes an image file something a
// model can be sent: it tells the supported formats (PNG, JPEG, GIF, WebP)
// from their first bytes, and shrinks an image whose longest side or size
// is over the limits, turning a JPEG upright by its EXIF orientation first.
// It knows nothing of tools: the caller words the result.
package imageutil

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// Limits: the longest side the model gets, the most base64 bytes of one
// image (headroom below a 5MB provider limit), the largest file and the
// most pixels that are decoded.
const (
	// MaxSide is the longest side, in pixels, of an image as sent.
	MaxSide = 2000
	// MaxBase64 is the most base64 bytes of one image as sent.
	MaxBase64 = 4.5 * 1024 * 1024
	// MaxFileBytes is the largest image file that is read at all.
	MaxFileBytes = 64 << 20
	// MaxPixels is the most pixels an image may have to be decoded.
	MaxPixels = 100_000_000

	jpegQuality   = 80
	shrinkPercent = 75
)

// DetectMIME tells a supported image from its first bytes: "image/png",
// "image/jpeg", "image/gif", "image/webp", or "" for anything else.
func DetectMIME(b []byte) string {
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

// Fitted is an image made fit to send, or why it cannot be.
type Fitted struct {
	// Data and MIME are the image to send.
	Data []byte
	MIME string
	// Resized is set when Data is a downscaled copy: Width x Height of the
	// original (upright) OrigWidth x OrigHeight.
	Resized               bool
	OrigWidth, OrigHeight int
	Width, Height         int
	// Omitted, when not empty, says why no image can be sent (a sentence
	// ending in '.'); Data is then nil.
	Omitted string
}

// Fit returns the image data of format mime as it can be sent: as it is
// when its longest side is at most MaxSide and its base64 form under
// MaxBase64 (also when it cannot be decoded), else downscaled and
// re-encoded as PNG or JPEG, smaller and smaller until it fits. A JPEG that
// is re-encoded is first turned upright by its EXIF orientation (the new
// file carries no EXIF); one sent as it is keeps its EXIF for the provider
// to honour.
func Fit(data []byte, mime string) Fitted {
	const cannot = "could not be resized below the inline image size limit."
	fits := base64.StdEncoding.EncodedLen(len(data)) < MaxBase64
	cfg, cfgErr := decodeConfig(data, mime)
	if fits && (cfgErr != nil || (cfg.Width <= MaxSide && cfg.Height <= MaxSide)) {
		// Small enough: sent as it is, even when it cannot be decoded.
		return Fitted{Data: data, MIME: mime}
	}
	if cfgErr != nil {
		return Fitted{Omitted: cannot}
	}
	if cfg.Width*cfg.Height > MaxPixels {
		return Fitted{Omitted: fmt.Sprintf("%dx%d is too many pixels to resize.", cfg.Width, cfg.Height)}
	}
	img, err := decodeImage(data, mime)
	if err != nil {
		return Fitted{Omitted: cannot}
	}
	if mime == "image/jpeg" {
		img = applyOrientation(img, jpegOrientation(data))
	}
	ow, oh := img.Bounds().Dx(), img.Bounds().Dy()
	w, h := ow, oh
	if w > MaxSide {
		h = int(math.Round(float64(h) * MaxSide / float64(w)))
		w = MaxSide
	}
	if h > MaxSide {
		w = int(math.Round(float64(w) * MaxSide / float64(h)))
		h = MaxSide
	}
	w, h = max(w, 1), max(h, 1)
	for {
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.CatmullRom.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Over, nil)
		if out, outMime, ok := encodeWithin(dst); ok {
			return Fitted{Data: out, MIME: outMime, Resized: true, OrigWidth: ow, OrigHeight: oh, Width: w, Height: h}
		}
		if w == 1 && h == 1 {
			return Fitted{Omitted: cannot}
		}
		w, h = max(1, w*shrinkPercent/100), max(1, h*shrinkPercent/100)
	}
}

// encodeWithin encodes img as PNG (fast compression: the default level
// costs seconds on a photo-like 2000 px image), else as JPEG at falling
// qualities, and returns the first encoding small enough to send.
func encodeWithin(img image.Image) ([]byte, string, bool) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if enc.Encode(&b, img) == nil && base64.StdEncoding.EncodedLen(b.Len()) < MaxBase64 {
		return b.Bytes(), "image/png", true
	}
	for _, q := range []int{jpegQuality, 85, 70, 55, 40} {
		b.Reset()
		if jpeg.Encode(&b, img, &jpeg.Options{Quality: q}) == nil && base64.StdEncoding.EncodedLen(b.Len()) < MaxBase64 {
			return b.Bytes(), "image/jpeg", true
		}
	}
	return nil, "", false
}
