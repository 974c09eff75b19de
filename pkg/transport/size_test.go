package transport_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/teebody/teebody/pkg/transport"
)

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1048576", 1 << 20},
		{"-1", -1},
		{"+5", 5},
		{"-0", 0},
		{"512MiB", 512 << 20},
		{"50Mi", 50 << 20},
		{"1G", 1e9},
		{"1GB", 1e9},
		{"1Gi", 1 << 30},
		{"1.5GiB", 3 << 29},
		{"0.5KiB", 512},
		{"2k", 2000},
		{"2kB", 2000},
		{"2KB", 2000},
		{"2Ki", 2048},
		{"2KiB", 2048},
		{"3M", 3e6},
		{"5MB", 5e6},
		{"5MiB", 5 << 20},
		{"1GiB", 1 << 30},
		{"1TB", 1e12},
		{"1Ti", 1 << 40},
		{"1T", 1e12},
		{"1TiB", 1 << 40},
		{"100B", 100},
		{"64 KiB", 64 << 10},
		{"  64KiB\t", 64 << 10},
		{"1.000", 1},
		{"007", 7},
		{"-1MiB", -1 << 20},
		{"9223372036854775807", 1<<63 - 1},
		{"8388607Ti", 8388607 << 40},
		{"9223372036854775807B", math.MaxInt64},
		{"-9223372036854775807", -math.MaxInt64},
		{"9223372036854775.807kB", math.MaxInt64},
		{"9223372036.854775807G", math.MaxInt64},
		{"8388607.9999999999990905052982270717620849609375Ti", math.MaxInt64}, // 2^40-1 bytes in the fraction
		{"-8388607.9999999999990905052982270717620849609375Ti", -math.MaxInt64},
		{"0.0000000000009094947017729282379150390625Ti", 1}, // 2^-40: forty fraction digits
		{"0.0009765625KiB", 1},
		{"-0.5KiB", -512},
		{"1.500000000000000000000000000KiB", 1536},
		{"0.001kB", 1},
		{"00000000000000000000000000001", 1},
	}
	for _, tc := range good {
		got, err := transport.ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, nil", tc.in, got, err, tc.want)
		}
	}

	bad := []struct {
		in, why string
	}{
		{"", "empty"},
		{"   ", "only spaces"},
		{"MiB", "unit without a number"},
		{"abc", "no number"},
		{"12XB", "unknown unit"},
		{"1GiBs", "unknown unit"},
		{"1Pi", "unit beyond Ti"},
		{"1EiB", "unit beyond Ti"},
		{"500m", "milli in Kubernetes quantities"},
		{"1mb", "units are case-sensitive"},
		{"1mib", "units are case-sensitive"},
		{"1MIB", "units are case-sensitive"},
		{"1gi", "units are case-sensitive"},
		{"1kib", "units are case-sensitive"},
		{"2K", "no K alone: Kubernetes has none"},
		{"2Kb", "a bit, or ambiguous"},
		{"2kb", "a bit, or ambiguous"},
		{"1b", "a bit, or ambiguous"},
		{"1KIB", "units are case-sensitive"},
		{"1.5.5", "two points"},
		{".5", "no integer part"},
		{"5.", "no fraction digits"},
		{"1e3", "exponent"},
		{"1E3", "exponent"},
		{"0x10", "hexadecimal"},
		{"1_000", "digit separator"},
		{"1,000", "digit separator"},
		{"1 000", "inner space"},
		{"--5", "two signs"},
		{"+-5", "two signs"},
		{"-", "sign alone"},
		{"1/2", "fraction"},
		{"1.5", "half a byte"},
		{"1.1B", "fraction of a byte"},
		{"0.0001KiB", "fraction of a byte"},
		{"9223372036854775808", "overflow"},
		{"-9223372036854775809", "overflow"},
		{"8388608Ti", "overflow"},
		{"99999999999999999999GiB", "overflow"},
		{"-9223372036854775808", "overflow: the range is symmetric"},
		{"9223372036854775.808kB", "overflow"},
		{"8388608.0Ti", "overflow"},
		{"8388607.99999999999909050529822707176208496094Ti", "rounds to 2^63-1, but is not whole"},
		{"1.0000000000000000001", "a fraction a float64 would round away"},
		{"9223372036854775807.5", "a fraction past the largest size"},
		{"0.00000000000090949470177292823791503906251Ti", "a digit past 2^-40"},
		{"0.0001kB", "fraction of a byte"},
		{"-+5", "two signs"},
		{"5-", "a sign after"},
		{"1.-5", "a sign in the fraction"},
		{"1 MiB extra", "trailing words"},
		{"MiB1", "unit first"},
		{"１２", "non-ASCII digits"},
		{"1µB", "non-ASCII unit"},
		{"NaN", "not a number"},
		{"Inf", "not a number"},
	}
	for _, tc := range bad {
		got, err := transport.ParseSize(tc.in)
		if err == nil {
			t.Errorf("ParseSize(%q) (%s) = %d, nil; want an error", tc.in, tc.why, got)
			continue
		}
		if !errors.Is(err, transport.ErrInvalidSize) {
			t.Errorf("ParseSize(%q) error %v does not match ErrInvalidSize", tc.in, err)
		}
		if !strings.Contains(err.Error(), `"`+tc.in+`"`) {
			t.Errorf("ParseSize(%q) error %q does not quote the input", tc.in, err)
		}
	}
}

// TestParseSizeErrors pins the texts: one package prefix, the input quoted,
// and for an unknown unit the units that are valid.
func TestParseSizeErrors(t *testing.T) {
	const units = "B, kB, KB, k, MB, M, GB, G, TB, T, KiB, Ki, MiB, Mi, GiB, Gi, TiB, Ti"
	for _, tc := range []struct{ in, want string }{
		{"12XB", `transport: invalid size "12XB": unknown unit "XB": want ` + units},
		{"500m", `transport: invalid size "500m": unknown unit "m": want ` + units},
		{"2K", `transport: invalid size "2K": unknown unit "K": want ` + units},
		{"MiB", `transport: invalid size "MiB": want a decimal number with an optional unit`},
		{"1e3", `transport: invalid size "1e3": want a decimal number with an optional unit`},
		{"0x10", `transport: invalid size "0x10": want a decimal number with an optional unit`},
		{"1.5", `transport: invalid size "1.5": not a whole number of bytes`},
		{"8388608Ti", `transport: invalid size "8388608Ti": out of range`},
		{"-9223372036854775808", `transport: invalid size "-9223372036854775808": out of range`},
		{"99999999999999999999", `transport: invalid size "99999999999999999999": out of range`},
		{"99999999999999999999.5", `transport: invalid size "99999999999999999999.5": not a whole number of bytes`},
		{"99999999999999999999-", `transport: invalid size "99999999999999999999-": want a decimal number with an optional unit`},
		{"1.5 Q", `transport: invalid size "1.5 Q": unknown unit "Q": want ` + units},
	} {
		_, err := transport.ParseSize(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseSize(%q) error:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}
