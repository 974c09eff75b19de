package transport

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// ErrInvalidSize matches every error from ParseSize, and every error of
// ConfigFromEnv about a size, with errors.Is.
var ErrInvalidSize = errors.New("transport: invalid size")

// sizeUnits maps each unit ParseSize accepts to its multiplier. Units are
// case-sensitive, so that nothing is ambiguous: "m" is milli in Kubernetes
// quantities, "b" often a bit. docs/design.md, Configuration, says why.
var sizeUnits = map[string]int64{
	"": 1, "B": 1,
	"kB": 1e3, "KB": 1e3, "k": 1e3, "KiB": 1 << 10, "Ki": 1 << 10,
	"MB": 1e6, "M": 1e6, "MiB": 1 << 20, "Mi": 1 << 20,
	"GB": 1e9, "G": 1e9, "GiB": 1 << 30, "Gi": 1 << 30,
	"TB": 1e12, "T": 1e12, "TiB": 1 << 40, "Ti": 1 << 40,
}

// validUnits lists the keys of sizeUnits for the error about any other unit.
const validUnits = "B, kB, KB, k, MB, M, GB, G, TB, T, KiB, Ki, MiB, Mi, GiB, Gi, TiB, Ti"

// ParseSize parses a byte size: a decimal number, then an optional unit.
// The number may have a sign and a fraction. Spaces may separate the two.
// Examples: "1048576", "512MiB", "50Mi", "1G", "1.5GiB", "64 KiB", "-1".
//
// Units are case-sensitive:
//   - B is one byte.
//   - kB, KB, MB, GB and TB are powers of 1000: MB is 10^6 bytes.
//   - k, M, G and T are the same, as in Kubernetes quantities.
//   - KiB, MiB, GiB and TiB are powers of 1024: MiB is 2^20 bytes.
//   - Ki, Mi, Gi and Ti are the same, as in Kubernetes quantities.
//
// Any other unit is an error, such as "K", "mb" or "m" (milli in Kubernetes).
// The result must be a whole number of bytes that fits an int64.
// Exponents, hexadecimal and digit separators are errors too.
// Every error matches ErrInvalidSize and quotes s.
func ParseSize(s string) (int64, error) {
	n, err := parseSize(s)
	if err != nil {
		return 0, fmt.Errorf("transport: %w", err)
	}
	return n, nil
}

// sizeError is an error of ParseSize without the package prefix, so that
// ConfigFromEnv can put the variable's name between the two.
type sizeError struct {
	size   string // the input, quoted in the text
	reason string
}

func (e *sizeError) Error() string { return fmt.Sprintf("invalid size %q: %s", e.size, e.reason) }

func (e *sizeError) Is(target error) bool { return target == ErrInvalidSize }

// parseSize is ParseSize with errors of type *sizeError.
func parseSize(s string) (int64, error) {
	num, unit := splitSize(strings.TrimSpace(s))
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, &sizeError{s, fmt.Sprintf("unknown unit %q: want %s", unit, validUnits)}
	}
	r, ok := parseDecimal(num)
	if !ok {
		return 0, &sizeError{s, "want a decimal number with an optional unit"}
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if !r.IsInt() {
		return 0, &sizeError{s, "not a whole number of bytes"}
	}
	n := r.Num()
	if !n.IsInt64() || n.Int64() == math.MinInt64 {
		return 0, &sizeError{s, "out of range"}
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

// parseDecimal returns the value of s if it is [+-]digits[.digits], and
// whether it is. It reads the digits itself: big.Rat.SetString would also
// take exponents, fractions and base prefixes.
func parseDecimal(s string) (*big.Rat, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || hasDot && frac == "" {
		return nil, false
	}
	num := new(big.Int)
	ten := big.NewInt(10)
	for _, c := range intPart + frac {
		if c < '0' || c > '9' {
			return nil, false
		}
		num.Mul(num, ten).Add(num, big.NewInt(int64(c-'0')))
	}
	if neg {
		num.Neg(num)
	}
	den := new(big.Int).Exp(ten, big.NewInt(int64(len(frac))), nil)
	return new(big.Rat).SetFrac(num, den), true
}
