package content

import (
	"encoding/json"
	"testing"
)

func TestBlockJSON(t *testing.T) {
	tests := []struct {
		name string
		b    Block
		want string
	}{
		{"text", Text("hi"), `{"type":"text","text":"hi"}`},
		{"empty text keeps its field", Text(""), `{"type":"text","text":""}`},
		{"image", Image("aGk=", "image/png"), `{"type":"image","data":"aGk=","mimeType":"image/png"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.b)
			if err != nil || string(got) != tt.want {
				t.Fatalf("Marshal = %s, %v; want %s", got, err, tt.want)
			}
			var back Block
			if err := json.Unmarshal(got, &back); err != nil || back != tt.b {
				t.Fatalf("round trip = %+v, %v; want %+v", back, err, tt.b)
			}
		})
	}
}
