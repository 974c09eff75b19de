package transport_test

import (
	"errors"
	"os"
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
		{"512mib", 512 << 20},
		{"512MIB", 512 << 20},
		{"50Mi", 50 << 20},
		{"1G", 1e9},
		{"1GB", 1e9},
		{"1Gi", 1 << 30},
		{"1.5GiB", 3 << 29},
		{"0.5KiB", 512},
		{"2k", 2000},
		{"2K", 2000},
		{"2KB", 2000},
		{"3M", 3e6},
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

func TestConfigFromEnv(t *testing.T) {
	const mib = 1 << 20
	def := transport.DefaultConfig()
	if def.TotalBytes != 500*mib || def.PerRequestBytes != 50*mib || def.RetryAfter != transport.DefaultRetryAfter {
		t.Fatalf("DefaultConfig() = %+v", def)
	}
	cases := []struct {
		name            string
		total, perReq   string // "-" leaves the variable unset
		wantTotal, want int64
	}{
		{"unset", "-", "-", 500 * mib, 50 * mib},
		{"empty", "", " ", 500 * mib, 50 * mib},
		{"both", "1GiB", "10Mi", 1 << 30, 10 * mib},
		{"plain bytes", "1048576", "4096", mib, 4096},
		{"per request capped at total", "20MiB", "-", 20 * mib, 20 * mib},
		{"per request above total", "1MiB", "2MiB", mib, mib},
		{"total disabled", "0", "-", 0, 50 * mib},
		{"total negative", "-1", "-", -1, 50 * mib},
		{"per request disabled", "-", "0", 500 * mib, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, transport.EnvTotalBytes, tc.total)
			setEnv(t, transport.EnvPerRequestBytes, tc.perReq)
			cfg, err := transport.ConfigFromEnv()
			if err != nil {
				t.Fatalf("ConfigFromEnv: %v", err)
			}
			if cfg.TotalBytes != tc.wantTotal || cfg.PerRequestBytes != tc.want {
				t.Errorf("ConfigFromEnv() = total %d, per request %d; want %d, %d", cfg.TotalBytes, cfg.PerRequestBytes, tc.wantTotal, tc.want)
			}
			if cfg.RetryAfter != transport.DefaultRetryAfter {
				t.Errorf("RetryAfter = %v", cfg.RetryAfter)
			}
		})
	}

	for _, name := range []string{transport.EnvTotalBytes, transport.EnvPerRequestBytes} {
		for _, val := range []string{"12XB", "1.5.5", "lots", "1e9", "0x10", "99999999999999999999"} {
			t.Run("malformed "+name+"="+val, func(t *testing.T) {
				other := transport.EnvPerRequestBytes
				if name == other {
					other = transport.EnvTotalBytes
				}
				setEnv(t, other, "-")
				setEnv(t, name, val)
				cfg, err := transport.ConfigFromEnv()
				if err == nil {
					t.Fatalf("ConfigFromEnv() = %+v, nil; want an error", cfg)
				}
				if !errors.Is(err, transport.ErrInvalidSize) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), `"`+val+`"`) {
					t.Errorf("error %q must name %s, quote %q and match ErrInvalidSize", err, name, val)
				}
				if cfg != (transport.Config{}) {
					t.Errorf("config with the error = %+v, want the zero Config", cfg)
				}
			})
		}
	}
}

// setEnv sets name to val for the test, or unsets it when val is "-".
func setEnv(t *testing.T, name, val string) {
	t.Helper()
	t.Setenv(name, "") // restores the old value at the end of the test
	if val == "-" {
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Setenv(name, val)
}
