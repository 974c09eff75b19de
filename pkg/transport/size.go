package transport

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// ErrInvalidSize is the errors.Is target of every error from ParseSize, so
// that a caller that wraps it among errors of its own can recognise it.
var ErrInvalidSize = errors.New("transport: invalid size")

// sizeUnits maps a unit, in lower case, to its multiplier. Decimal units are
// powers of 1000 and binary ones powers of 1024, as in Kubernetes quantities
// ("1G" is 10^9, "1Gi" is 2^30); a trailing "B" is optional.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1e6, "mb": 1e6, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1e9, "gb": 1e9, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1e12, "tb": 1e12, "ti": 1 << 40, "tib": 1 << 40,
}

// ParseSize parses a byte size: a decimal number, optionally signed and with
// a fraction, followed by an optional unit, optionally separated by spaces:
// "1048576", "512MiB", "50Mi", "1G", "1.5GiB", "64 KiB", "-1".
//
// Units are case-insensitive: B; K, M, G, T (powers of 1000, "KB" etc.
// alike); Ki, Mi, Gi, Ti (powers of 1024, "KiB" etc. alike). The result must
// be a whole number of bytes that fits an int64. Exponents, hexadecimal,
// digit separators and anything else are rejected with an error that wraps
// ErrInvalidSize and quotes s.
//
// ParseSize is what ConfigFromEnv parses its sizes with; it is exported so
// that configuration read from elsewhere (command-line flags, a Caddyfile)
// takes exactly the same forms.
func ParseSize(s string) (int64, error) {
	num, unit := splitSize(strings.TrimSpace(s))
	mult, ok := sizeUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("%w %q: unknown unit %q", ErrInvalidSize, s, unit)
	}
	if !isDecimal(num) {
		return 0, fmt.Errorf("%w %q: want a decimal number with an optional unit", ErrInvalidSize, s)
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok { // unreachable after isDecimal; kept so a future change cannot panic below
		return 0, fmt.Errorf("%w %q: want a decimal number with an optional unit", ErrInvalidSize, s)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return 0, fmt.Errorf("%w %q: not a whole number of bytes", ErrInvalidSize, s)
	}
	n := r.Num()
	if !n.IsInt64() || n.Int64() == math.MinInt64 {
		return 0, fmt.Errorf("%w %q: out of range", ErrInvalidSize, s)
	}
	return n.Int64(), nil
}

// splitSize splits s into the number and the unit after it, dropping the
// spaces between them.
func splitSize(s string) (num, unit string) {
	i := strings.LastIndexFunc(s, func(r rune) bool { return !isLetter(r) })
	return strings.TrimRight(s[:i+1], " \t"), s[i+1:]
}

func isLetter(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }

// isDecimal reports whether s is [+-]digits[.digits].
func isDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	return allDigits(intPart) && (!hasDot || allDigits(frac))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
