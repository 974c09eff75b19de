package transport

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrInvalidSize matches every error of ParseSize and ConfigFromEnv about a size.
var ErrInvalidSize = errors.New("invalid size")

// sizeUnits maps each unit of ParseSize to its multiplier (docs/design.md, Configuration).
var sizeUnits = map[string]int64{"": 1, "B": 1,
	"kB": 1e3, "KB": 1e3, "k": 1e3, "KiB": 1 << 10, "Ki": 1 << 10, "MB": 1e6, "M": 1e6, "MiB": 1 << 20, "Mi": 1 << 20,
	"GB": 1e9, "G": 1e9, "GiB": 1 << 30, "Gi": 1 << 30, "TB": 1e12, "T": 1e12, "TiB": 1 << 40, "Ti": 1 << 40}

const validUnits = "B, kB, KB, k, MB, M, GB, G, TB, T, KiB, Ki, MiB, Mi, GiB, Gi, TiB, Ti"

// ParseSize parses a byte size: a decimal number with an optional sign and
// fraction, then an optional unit, maybe after spaces, such as "512MiB",
// "1.5GiB", "64 KiB" or "-1". Units are case-sensitive. B is a byte. kB, KB,
// MB, GB, TB and Kubernetes' k, M, G, T are powers of 1000. KiB, MiB, GiB, TiB
// and Ki, Mi, Gi, Ti are powers of 1024. Any other unit is an error, such as
// "K", "mb" or "m" (milli in Kubernetes). The result must be a whole number
// of bytes, at most 2^63-1 either way. Every error matches ErrInvalidSize.
func ParseSize(s string) (int64, error) { return parseSize("transport: ", s) }

// parseSize is ParseSize with prefix at the start of its errors.
func parseSize(prefix, s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.LastIndexFunc(t, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') })
	num, unit := strings.TrimRight(t[:i+1], " \t"), t[i+1:]
	whole, frac, dot := strings.Cut(strings.TrimLeft(num, "+-"), ".")
	mult, known := sizeUnits[unit]
	f, exact := int64(0), true // the fraction's bytes, from its last digit: if the sum is whole, so is each step
	for i := len(frac) - 1; i >= 0; i-- {
		f += int64(frac[i]-'0') * mult
		f, exact = f/10, exact && f%10 == 0
	}
	n, err := strconv.ParseInt(whole, 10, 64)
	var why string
	switch {
	case !known:
		why = fmt.Sprintf("unknown unit %q: want %s", unit, validUnits)
	case strings.LastIndexAny(num, "+-") > 0 || whole == "" || dot && frac == "" || strings.Trim(whole+frac, "0123456789") != "":
		why = "want a decimal number with an optional unit"
	case !exact:
		why = "not a whole number of bytes"
	case err != nil || n > (math.MaxInt64-f)/mult: // whole is digits: err is ErrRange
		why = "out of range"
	case num[0] == '-':
		return -(n*mult + f), nil
	default:
		return n*mult + f, nil
	}
	return 0, fmt.Errorf("%s%w %q: %s", prefix, ErrInvalidSize, s, why)
}
