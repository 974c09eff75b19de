package proxytest_test

import (
	"testing"

	"github.com/teebody/teebody/internal/proxytest"
)

func TestSizeName(t *testing.T) {
	for n, want := range map[int]string{
		0:             "0B",
		1:             "1B",
		1000:          "1000B",
		1 << 10:       "1KiB",
		1<<10 + 1:     "1025B",
		64 << 10:      "64KiB",
		1536 << 10:    "1536KiB",
		1 << 20:       "1MiB",
		16 << 20:      "16MiB",
		(1 << 20) - 1: "1048575B",
	} {
		if got := proxytest.SizeName(n); got != want {
			t.Errorf("SizeName(%d) = %q, want %q", n, got, want)
		}
	}
}
