package imageutil

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

// withEXIFOrientation inserts an APP1 EXIF segment holding only the
// Orientation tag right after a JPEG's SOI marker.
func withEXIFOrientation(jpg []byte, orientation uint16, order binary.ByteOrder) []byte {
	var tiff bytes.Buffer
	if order == binary.LittleEndian {
		tiff.WriteString("II")
	} else {
		tiff.WriteString("MM")
	}
	w := func(v any) { binary.Write(&tiff, order, v) }
	w(uint16(42))
	w(uint32(8)) // IFD0 right after the header
	w(uint16(2)) // two entries: an unrelated one, then Orientation
	w(uint16(0x010F))
	w(uint16(2))
	w(uint32(4))
	tiff.WriteString("pi\x00\x00") // Make
	w(uint16(0x0112))
	w(uint16(3))
	w(uint32(1))
	w(orientation)
	w(uint16(0))
	w(uint32(0))
	seg := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	var out bytes.Buffer
	out.Write(jpg[:2])
	out.Write([]byte{0xFF, 0xE1})
	binary.Write(&out, binary.BigEndian, uint16(len(seg)+2))
	out.Write(seg)
	out.Write(jpg[2:])
	return out.Bytes()
}

func TestJPEGOrientation(t *testing.T) {
	plain := encodeTestImage(t, "jpeg", testImage(8, 4))
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		for o := uint16(1); o <= 8; o++ {
			if got := jpegOrientation(withEXIFOrientation(plain, o, order)); got != int(o) {
				t.Errorf("%v orientation %d read as %d", order, o, got)
			}
		}
	}
	if got := jpegOrientation(plain); got != 1 {
		t.Errorf("no EXIF: %d", got)
	}
	if got := jpegOrientation(withEXIFOrientation(plain, 9, binary.BigEndian)); got != 1 {
		t.Errorf("out-of-range orientation: %d", got)
	}
	bad := withEXIFOrientation(plain, 6, binary.BigEndian)
	for n := range 40 { // cut anywhere in the EXIF segment: no panic, a valid answer
		if got := jpegOrientation(bad[:n]); got < 1 || got > 8 {
			t.Errorf("truncated at %d: %d", n, got)
		}
	}
}

func TestApplyOrientation(t *testing.T) {
	// A 3x2 image with a red top-left and a green top-right corner.
	src := image.NewRGBA(image.Rect(0, 0, 3, 2))
	red, green := color.RGBA{255, 0, 0, 255}, color.RGBA{0, 255, 0, 255}
	src.Set(0, 0, red)
	src.Set(2, 0, green)
	type corner int
	const (
		topLeft corner = iota
		topRight
		bottomRight
		bottomLeft
	)
	// Where the stored top-left and top-right corners show once upright
	// (the EXIF orientation table).
	tests := []struct {
		o          int
		tl, tr     corner
		swapsSides bool
	}{
		{1, topLeft, topRight, false},
		{2, topRight, topLeft, false},
		{3, bottomRight, bottomLeft, false},
		{4, bottomLeft, bottomRight, false},
		{5, topLeft, bottomLeft, true},
		{6, topRight, bottomRight, true},
		{7, bottomRight, topRight, true},
		{8, bottomLeft, topLeft, true},
	}
	at := func(img image.Image, c corner) color.Color {
		b := img.Bounds()
		switch c {
		case topLeft:
			return img.At(b.Min.X, b.Min.Y)
		case topRight:
			return img.At(b.Max.X-1, b.Min.Y)
		case bottomRight:
			return img.At(b.Max.X-1, b.Max.Y-1)
		}
		return img.At(b.Min.X, b.Max.Y-1)
	}
	same := func(a, b color.Color) bool {
		r1, g1, b1, a1 := a.RGBA()
		r2, g2, b2, a2 := b.RGBA()
		return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
	}
	for _, tt := range tests {
		got := applyOrientation(src, tt.o)
		w, h := got.Bounds().Dx(), got.Bounds().Dy()
		if tt.swapsSides != (w == 2 && h == 3) {
			t.Errorf("orientation %d: %dx%d", tt.o, w, h)
		}
		if !same(at(got, tt.tl), red) || !same(at(got, tt.tr), green) {
			t.Errorf("orientation %d: corners not where the EXIF table puts them", tt.o)
		}
	}
}

// TestFitTurnsUprightWhenResizing: a JPEG that must be shrunk is turned
// upright by its EXIF orientation first (the copy carries no EXIF).
func TestFitTurnsUprightWhenResizing(t *testing.T) {
	// Stored 2200x60 (too wide), orientation 6: upright it is 60x2200.
	img := image.NewRGBA(image.Rect(0, 0, 2200, 60))
	for y := range 60 {
		for x := range 2200 {
			c := color.RGBA{0, 0, 255, 255}
			if x < 1100 {
				c = color.RGBA{255, 0, 0, 255} // left half red
			}
			img.Set(x, y, c)
		}
	}
	data := withEXIFOrientation(encodeTestImage(t, "jpeg", img), 6, binary.BigEndian)
	fit := Fit(data, DetectMIME(data))
	if fit.Omitted != "" || !fit.Resized || fit.MIME != "image/png" {
		t.Fatalf("got %+v", fit)
	}
	if fit.OrigWidth != 60 || fit.OrigHeight != 2200 || fit.Width != 55 || fit.Height != 2000 {
		t.Errorf("sizes %dx%d -> %dx%d, want 60x2200 -> 55x2000", fit.OrigWidth, fit.OrigHeight, fit.Width, fit.Height)
	}
	shown, err := png.Decode(bytes.NewReader(fit.Data))
	if err != nil {
		t.Fatal(err)
	}
	// Turned clockwise, the stored left half is the top half.
	rt, _, _, _ := shown.At(27, 10).RGBA()
	rb, _, bb, _ := shown.At(27, 1990).RGBA()
	if rt < 0xC000 || rb > 0x4000 || bb < 0xC000 {
		t.Errorf("not turned upright: top red %x, bottom red %x blue %x", rt, rb, bb)
	}
}

func testImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := img.PixOffset(x, y)
			copy(img.Pix[i:i+4], []uint8{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	return img
}

func encodeTestImage(t testing.TB, kind string, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch kind {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
