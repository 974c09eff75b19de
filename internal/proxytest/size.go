package proxytest

import "strconv"

// SizeName names a size of n bytes as benchmarks and logs show it: "16MiB",
// "64KiB", or "1000B" when n is not a whole number of KiB.
func SizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}
