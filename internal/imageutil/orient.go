package imageutil

import (
	"bytes"
	"encoding/binary"
	"image"

	"golang.org/x/image/draw"
)

// jpegOrientation returns the EXIF orientation (1-8) of a JPEG, 1 when it
// has none or the EXIF data cannot be read.
func jpegOrientation(b []byte) int {
	off := 2 // after SOI
	for off+4 <= len(b) {
		if b[off] != 0xFF {
			return 1
		}
		marker := b[off+1]
		switch {
		case marker == 0xFF: // fill byte
			off++
			continue
		case marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8):
			off += 2 // markers without a length
			continue
		case marker == 0xDA || marker == 0xD9: // image data starts: no EXIF before it
			return 1
		}
		length := int(binary.BigEndian.Uint16(b[off+2:]))
		end := off + 2 + length
		if length < 2 || end > len(b) {
			return 1
		}
		if seg := b[off+4 : end]; marker == 0xE1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return tiffOrientation(seg[6:])
		}
		off = end
	}
	return 1
}

// tiffOrientation reads the Orientation tag (0x0112) of the first IFD of a
// TIFF structure.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var order binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		order = binary.LittleEndian
	case "MM":
		order = binary.BigEndian
	default:
		return 1
	}
	ifd := int(order.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > len(t) {
		return 1
	}
	n := int(order.Uint16(t[ifd:]))
	for i := range n {
		e := ifd + 2 + 12*i
		if e+12 > len(t) {
			return 1
		}
		if order.Uint16(t[e:]) == 0x0112 {
			if v := int(order.Uint16(t[e+8:])); v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

// applyOrientation returns img turned upright for an EXIF orientation.
func applyOrientation(img image.Image, o int) image.Image {
	if o <= 1 || o > 8 {
		return img
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	src := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(src, src.Bounds(), img, b.Min, draw.Src)
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := range dh {
		for x := range dw {
			var sx, sy int
			switch o {
			case 2: // mirrored
				sx, sy = w-1-x, y
			case 3: // upside down
				sx, sy = w-1-x, h-1-y
			case 4: // mirrored upside down
				sx, sy = x, h-1-y
			case 5: // transposed
				sx, sy = y, x
			case 6: // turned 90° clockwise to be upright
				sx, sy = y, h-1-x
			case 7: // transverse
				sx, sy = w-1-y, h-1-x
			case 8: // turned 90° counter-clockwise to be upright
				sx, sy = w-1-y, x
			}
			si, di := src.PixOffset(sx, sy), dst.PixOffset(x, y)
			copy(dst.Pix[di:di+4], src.Pix[si:si+4])
		}
	}
	return dst
}
