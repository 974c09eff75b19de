package goawaytest

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// The blocks of the server's encoder decode with the smallest table a Go
// server may have (http.HTTP2Config.MaxDecoderHeaderTableSize 1), whatever
// they repeat: they never refer to the dynamic table.
func TestServerEncoderKeepsNoTable(t *testing.T) {
	var buf bytes.Buffer
	enc := newServerEncoder(&buf)
	dec := hpack.NewDecoder(1, nil)
	long := hpack.HeaderField{Name: "x-long", Value: strings.Repeat("v", 100)}
	for i := range 3 {
		buf.Reset()
		for _, f := range []hpack.HeaderField{{Name: ":method", Value: "GET"}, long, {Name: "x-other", Value: "o"}, long} {
			if err := enc.WriteField(f); err != nil {
				t.Fatal(err)
			}
		}
		fields, err := dec.DecodeFull(buf.Bytes())
		if err != nil || len(fields) != 4 || fields[3] != long {
			t.Fatalf("block %d: %v, %v", i, fields, err)
		}
	}
}
