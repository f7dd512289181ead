package imageutil

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"testing"
)

func TestDetectMIME(t *testing.T) {
	for _, tt := range []struct {
		head []byte
		want string
	}{
		{encodeTestImage(t, "png", testImage(2, 2)), "image/png"},
		{encodeTestImage(t, "jpeg", testImage(2, 2)), "image/jpeg"},
		{[]byte("GIF89a..."), "image/gif"},
		{[]byte("GIF87a..."), "image/gif"},
		{[]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), "image/webp"},
		{[]byte("RIFF\x00\x00\x00\x00WAVE"), ""},
		{[]byte("\x89PNG\r\n"), ""}, // cut signature
		{[]byte("hello"), ""},
		{nil, ""},
	} {
		if got := DetectMIME(tt.head); got != tt.want {
			t.Errorf("DetectMIME(%q) = %q, want %q", tt.head[:min(len(tt.head), 12)], got, tt.want)
		}
	}
}

// TestFit: a small image goes as it is (bytes untouched, EXIF kept); a
// wide one is shrunk to MaxSide on its long side; a large file that cannot
// be decoded is omitted with the reason.
func TestFit(t *testing.T) {
	small := encodeTestImage(t, "jpeg", testImage(40, 30))
	small = withEXIFOrientation(small, 6, binary.LittleEndian)
	if fit := Fit(small, "image/jpeg"); fit.Resized || fit.Omitted != "" || !bytes.Equal(fit.Data, small) || fit.MIME != "image/jpeg" {
		t.Errorf("small image: resized %v omitted %q, %d bytes", fit.Resized, fit.Omitted, len(fit.Data))
	}
	wide := encodeTestImage(t, "png", testImage(2400, 30))
	fit := Fit(wide, "image/png")
	if !fit.Resized || fit.Width != MaxSide || fit.Height != 25 || fit.OrigWidth != 2400 || fit.OrigHeight != 30 {
		t.Fatalf("wide image: %+v", fit)
	}
	if img, err := png.Decode(bytes.NewReader(fit.Data)); err != nil || img.Bounds().Dx() != MaxSide {
		t.Errorf("wide image data: %v", err)
	}
	junk := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0xAB}, MaxBase64)...)
	if fit := Fit(junk, "image/png"); fit.Omitted == "" || fit.Data != nil {
		t.Errorf("undecodable large file: %+v", fit.Omitted)
	}
}

// FuzzJPEGOrientation: the EXIF reader never panics on any bytes and
// always answers an orientation 1-8.
func FuzzJPEGOrientation(f *testing.F) {
	plain := encodeTestImage(f, "jpeg", testImage(4, 4))
	f.Add(plain)
	f.Add(withEXIFOrientation(plain, 6, binary.BigEndian))
	f.Add(withEXIFOrientation(plain, 3, binary.LittleEndian))
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		if o := jpegOrientation(b); o < 1 || o > 8 {
			t.Fatalf("orientation %d", o)
		}
	})
}
