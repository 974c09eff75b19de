package transport_test

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/teebody/teebody/pkg/transport"
)

// The variables ConfigFromEnv reads.
const (
	envTotal   = transport.EnvPrefix + "TOTAL"
	envPerReq  = transport.EnvPrefix + "PER_REQ"
	envAdapt   = transport.EnvPrefix + "ADAPTIVE"
	envFloor   = transport.EnvPrefix + "ADAPTIVE_FLOOR"
	validUnits = "B, kB, KB, k, MB, M, GB, G, TB, T, KiB, Ki, MiB, Mi, GiB, Gi, TiB, Ti"
	validBools = "true or false (1, t, T, TRUE, True, 0, f, F, FALSE, False)"
)

func TestConfigFromEnvPrefixConstant(t *testing.T) {
	if transport.EnvPrefix != "TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_" {
		t.Errorf("EnvPrefix = %q: Teleport's deployments use TELEPORT_UNSTABLE_KUBE_RETRY_BUFFER_", transport.EnvPrefix)
	}
}

// TestConfigFromEnv: each variable sets its field, and the Transport made
// from it applies the limits capped as the Config doc says, whatever the
// total.
func TestConfigFromEnv(t *testing.T) {
	const mib = 1 << 20
	if def := transport.DefaultConfig(); def != (transport.Config{}) {
		t.Fatalf("DefaultConfig() = %+v, want the zero Config", def)
	}
	def := transport.New(nil, transport.Config{}).Config()
	if def.TotalBytes != 500*mib || def.PerRequestBytes != 50*mib || def.RetryAfter != transport.DefaultRetryAfter ||
		def.AdaptiveFloorBytes != 64<<10 || def.Disabled {
		t.Fatalf("New(nil, Config{}).Config() = %+v, want the defaults", def)
	}
	cases := []struct {
		name                       string
		total, perReq, floor       string // "-" leaves the variable unset
		wantOff                    bool
		wantTotal, want, wantFloor int64
	}{
		{"unset", "-", "-", "-", false, 500 * mib, 50 * mib, 64 << 10},
		{"empty", "", " ", "\t", false, 500 * mib, 50 * mib, 64 << 10},
		{"all", "1GiB", "10Mi", "1MB", false, 1 << 30, 10 * mib, 1e6},
		{"plain bytes", "1048576", "4096", "100", false, mib, 4096, 100},
		{"per request capped at total", "20MiB", "-", "-", false, 20 * mib, 20 * mib, 64 << 10},
		{"per request above total", "1MiB", "2MiB", "-", false, mib, mib, 64 << 10},
		{"total 0 disables", "0", "-", "-", true, 500 * mib, 50 * mib, 64 << 10},
		{"total negative disables", "-5", "-", "-", true, 500 * mib, 50 * mib, 64 << 10},
		{"total 0, per request set", "0", "10MiB", "-", true, 500 * mib, 10 * mib, 64 << 10},
		{"per request 0 disables", "-", "0", "-", true, 500 * mib, 50 * mib, 64 << 10},
		{"floor above per request", "-", "16KiB", "64KiB", false, 500 * mib, 16 << 10, 16 << 10},
		{"floor above a capped per request", "32KiB", "-", "1MiB", false, 32 << 10, 32 << 10, 32 << 10},
		{"floor 0 is off", "-", "-", "0", false, 500 * mib, 50 * mib, -1},
		{"floor negative is off", "-", "-", "-1", false, 500 * mib, 50 * mib, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, envTotal, tc.total)
			setEnv(t, envPerReq, tc.perReq)
			setEnv(t, envFloor, tc.floor)
			setEnv(t, envAdapt, "-")
			cfg, err := transport.ConfigFromEnv()
			if err != nil {
				t.Fatalf("ConfigFromEnv: %v", err)
			}
			want := transport.Config{Disabled: tc.wantOff, TotalBytes: tc.wantTotal, PerRequestBytes: tc.want,
				RetryAfter: transport.DefaultRetryAfter, AdaptiveWindow: transport.DefaultAdaptiveWindow,
				AdaptiveFloorBytes: tc.wantFloor}
			tr := transport.New(nil, cfg)
			if got := tr.Config(); got != want {
				t.Errorf("New(ConfigFromEnv()).Config() = %+v\nwant %+v", got, want)
			}
			if on := tr.Stats().BudgetBytes != 0; on == tc.wantOff {
				t.Errorf("buffering on: %v, want %v", on, !tc.wantOff)
			}
		})
	}
}

// TestConfigFromEnvPrefix: the same settings under a prefix the caller
// chooses, and nothing from the default names.
func TestConfigFromEnvPrefix(t *testing.T) {
	setEnv(t, envTotal, "12XB") // not read under another prefix
	setEnv(t, "MYPROXY_TOTAL", "1GB")
	setEnv(t, "MYPROXY_PER_REQ", "2MB")
	setEnv(t, "MYPROXY_ADAPTIVE", "1")
	setEnv(t, "MYPROXY_ADAPTIVE_FLOOR", "3kB")
	cfg, err := transport.ConfigFromEnvPrefix("MYPROXY_")
	want := transport.Config{TotalBytes: 1e9, PerRequestBytes: 2e6, Adaptive: true, AdaptiveFloorBytes: 3e3}
	if err != nil || cfg != want {
		t.Errorf("ConfigFromEnvPrefix = %+v, %v\nwant %+v, nil", cfg, err, want)
	}
	_, err = transport.ConfigFromEnv()
	if got := fmtErr(err); got != `transport: `+envTotal+`: invalid size "12XB": unknown unit "XB": want `+validUnits {
		t.Errorf("ConfigFromEnv error %q", got)
	}
}

func TestConfigFromEnvAdaptive(t *testing.T) {
	for _, tc := range []struct {
		val  string // "-" leaves the variable unset
		want bool
	}{
		{"-", false}, {"", false}, {"  ", false},
		{"true", true}, {"TRUE", true}, {"True", true}, {"t", true}, {"T", true}, {"1", true}, {" true\t", true},
		{"false", false}, {"FALSE", false}, {"False", false}, {"0", false}, {"f", false}, {"F", false},
	} {
		setEnv(t, envAdapt, tc.val)
		cfg, err := transport.ConfigFromEnv()
		if err != nil || cfg.Adaptive != tc.want {
			t.Errorf("%s=%q: Adaptive %v, %v; want %v, nil", envAdapt, tc.val, cfg.Adaptive, err, tc.want)
		}
		if want := transport.DefaultConfig(); err == nil && (cfg.TotalBytes != want.TotalBytes || cfg.AdaptiveWindow != 0) {
			t.Errorf("%s=%q changed more than Adaptive: %+v", envAdapt, tc.val, cfg)
		}
	}
	for _, val := range []string{"yes", "on", "no", "off", "maybe", "2", "tru", "-1", "tRuE"} {
		setEnv(t, envAdapt, val)
		cfg, err := transport.ConfigFromEnv()
		want := `transport: ` + envAdapt + `: invalid boolean "` + val + `": want ` + validBools
		if got := fmtErr(err); got != want {
			t.Errorf("%s=%q: error\n got %q\nwant %q", envAdapt, val, got, want)
		}
		if cfg != (transport.Config{}) {
			t.Errorf("config with the error = %+v, want the defaults (the zero Config)", cfg)
		}
	}
}

// TestConfigFromEnvErrors: one error reports every malformed variable, in
// the order of the doc, each with one prefix; sizes match ErrInvalidSize.
func TestConfigFromEnvErrors(t *testing.T) {
	for _, name := range []string{envTotal, envPerReq, envFloor} {
		for _, val := range []string{"12XB", "1.5.5", "lots", "1e9", "0x10", "99999999999999999999", "500m", "1mb"} {
			t.Run(name+"="+val, func(t *testing.T) {
				for _, other := range []string{envTotal, envPerReq, envFloor, envAdapt} {
					setEnv(t, other, "-")
				}
				setEnv(t, name, val)
				cfg, err := transport.ConfigFromEnv()
				if !errors.Is(err, transport.ErrInvalidSize) {
					t.Errorf("error %v does not match ErrInvalidSize", err)
				}
				_, perr := transport.ParseSize(val)
				want := "transport: " + name + ": " + strings.TrimPrefix(fmtErr(perr), "transport: ")
				if got := fmtErr(err); got != want || !strings.Contains(got, `"`+val+`"`) {
					t.Errorf("error\n got %q\nwant %q", got, want)
				}
				if cfg != (transport.Config{}) {
					t.Errorf("config with the error = %+v, want the defaults (the zero Config)", cfg)
				}
			})
		}
	}

	setEnv(t, envTotal, "12XB")
	setEnv(t, envPerReq, "1.5")
	setEnv(t, envAdapt, "yes")
	setEnv(t, envFloor, "64 K")
	cfg, err := transport.ConfigFromEnv()
	want := strings.Join([]string{
		`transport: ` + envTotal + `: invalid size "12XB": unknown unit "XB": want ` + validUnits,
		`transport: ` + envPerReq + `: invalid size "1.5": not a whole number of bytes`,
		`transport: ` + envAdapt + `: invalid boolean "yes": want ` + validBools,
		`transport: ` + envFloor + `: invalid size "64 K": unknown unit "K": want ` + validUnits,
	}, "\n")
	if got := fmtErr(err); got != want {
		t.Errorf("four malformed variables: error\n got %s\nwant %s", got, want)
	}
	if !errors.Is(err, transport.ErrInvalidSize) {
		t.Errorf("error %v does not match ErrInvalidSize", err)
	}
	if cfg != (transport.Config{}) {
		t.Errorf("config with the error = %+v, want the defaults (the zero Config)", cfg)
	}

	// A typo keeps the fix on: the malformed variable keeps its default,
	// the others apply.
	setEnv(t, envTotal, "1GiB")
	setEnv(t, envPerReq, "5OMiB") // a letter O for a zero
	setEnv(t, envAdapt, "-")
	setEnv(t, envFloor, "-")
	cfg, err = transport.ConfigFromEnv()
	if err == nil || cfg != (transport.Config{TotalBytes: 1 << 30}) {
		t.Errorf("with a typo: %+v, %v; want a total of 1 GiB and the other defaults, and an error", cfg, err)
	}
	if got := transport.New(nil, cfg).Stats().BudgetBytes; got != 1<<30 {
		t.Errorf("with a typo: BudgetBytes %d, want 1 GiB: buffering stays on", got)
	}

	setEnv(t, envTotal, "-")
	setEnv(t, envPerReq, "-")
	setEnv(t, envAdapt, "yes")
	if _, err := transport.ConfigFromEnv(); errors.Is(err, transport.ErrInvalidSize) {
		t.Errorf("a malformed boolean alone matches ErrInvalidSize: %v", err)
	}
}

// TestConfigDefaultsApplied: Transport.Config reports the default in place
// of a RetryAfter or AdaptiveWindow <= 0, and keeps one that is set.
func TestConfigDefaultsApplied(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		got := transport.New(nil, transport.Config{RetryAfter: d, AdaptiveWindow: d}).Config()
		if got.RetryAfter != transport.DefaultRetryAfter || got.AdaptiveWindow != transport.DefaultAdaptiveWindow {
			t.Errorf("with %v: RetryAfter %v, AdaptiveWindow %v; want the defaults", d, got.RetryAfter, got.AdaptiveWindow)
		}
	}
	got := transport.New(nil, transport.Config{RetryAfter: 3 * time.Second, AdaptiveWindow: time.Minute}).Config()
	if got.RetryAfter != 3*time.Second || got.AdaptiveWindow != time.Minute {
		t.Errorf("RetryAfter %v, AdaptiveWindow %v; want 3s, 1m as set", got.RetryAfter, got.AdaptiveWindow)
	}
}

// TestConfigFromEnvLayered: ConfigFromEnv returns each value as read, so a
// caller's own setting over it takes effect: a total of the caller's own
// (Disabled off, a total of its own) enables buffering that the
// environment's total of 0 disabled, with the default per-request limit
// capped at it.
func TestConfigFromEnvLayered(t *testing.T) {
	setEnv(t, envTotal, "0")
	setEnv(t, envPerReq, "-")
	setEnv(t, envFloor, "-")
	setEnv(t, envAdapt, "-")
	cfg, err := transport.ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Disabled {
		t.Fatalf("%s=0: Disabled false, want true", envTotal)
	}
	cfg.Disabled, cfg.TotalBytes = false, 1<<20
	got := transport.New(nil, cfg).Config()
	if got.TotalBytes != 1<<20 || got.PerRequestBytes != 1<<20 || got.AdaptiveFloorBytes != 64<<10 {
		t.Errorf("New(...).Config() = %+v, want 1 MiB in all and per request, and a 64 KiB floor", got)
	}
	if n := transport.New(nil, cfg).Stats().BudgetBytes; n != 1<<20 {
		t.Errorf("Stats().BudgetBytes = %d, want 1 MiB: buffering is on", n)
	}
}

// TestConfigFloorCappedAtPerRequest: in adaptive mode, a quiet body that
// announces more than the per-request limit passes through, though it
// announces less than the floor: it could never be held whole.
func TestConfigFloorCappedAtPerRequest(t *testing.T) {
	inner := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		_, err := io.Copy(io.Discard, req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("ok")), Request: req}, nil
	})
	cfg := transport.DefaultConfig()
	cfg.Adaptive = true
	cfg.PerRequestBytes = 1 << 10
	cfg.AdaptiveFloorBytes = 64 << 10
	tr := transport.New(inner, cfg)
	for _, size := range []int{4 << 10, 1 << 10} {
		req, err := http.NewRequest(http.MethodPost, "http://upstream.invalid/", io.NopCloser(strings.NewReader(strings.Repeat("x", size))))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = int64(size)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip(%d bytes): %v", size, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	drain(t, tr)
	if st := tr.Stats(); st.PassedThrough.Quiet != 1 || st.BufferedQuiet != 1 {
		t.Errorf("passed through quiet %d, buffered quiet %d; want 1 (4 KiB, over the per-request limit), 1 (1 KiB)",
			st.PassedThrough.Quiet, st.BufferedQuiet)
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

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
