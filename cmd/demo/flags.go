package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/teebody/teebody/pkg/transport"
)

// errUsage marks an error that is the command line's fault (exit 2).
var errUsage = errors.New("usage")

// usageErr is an errUsage with a message.
func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// newFlags is a FlagSet that reports its errors instead of exiting.
func newFlags(name, synopsis string, c *cli) *flag.FlagSet {
	fs := flag.NewFlagSet("demo "+name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n\nflags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args; the status is -1 when the command should go on, else
// the exit status (0 for -h, 2 for a bad flag or a stray argument).
func parse(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage // the flag package printed the error and the usage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	return -1
}

// sizeFlag is a byte size in the forms transport.ParseSize accepts
// ("1048576", "512MiB", "50Mi", "1G"), that remembers whether it was set.
type sizeFlag struct {
	n   int64
	set bool
}

func (s *sizeFlag) String() string {
	if s == nil {
		return "0"
	}
	return fmt.Sprint(s.n)
}

func (s *sizeFlag) Set(v string) error {
	n, err := transport.ParseSize(strings.TrimSpace(v))
	if err != nil {
		return err
	}
	s.n, s.set = n, true
	return nil
}

// boolFlag is a boolean flag ("-adaptive", "-adaptive=false") that
// remembers whether it was set.
type boolFlag struct {
	b, set bool
}

func (f *boolFlag) String() string   { return strconv.FormatBool(f != nil && f.b) }
func (f *boolFlag) IsBoolFlag() bool { return true }

func (f *boolFlag) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("not a boolean: %q", v)
	}
	f.b, f.set = b, true
	return nil
}

// unitFlag is a float in [0, 1].
type unitFlag float64

func (u *unitFlag) String() string { return fmt.Sprint(float64(*u)) }

func (u *unitFlag) Set(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return fmt.Errorf("not a number: %q", v)
	}
	if !(f >= 0 && f <= 1) { // NaN too
		return fmt.Errorf("must be between 0 and 1, not %v", f)
	}
	*u = unitFlag(f)
	return nil
}

// fail prints err for command name and returns its exit status: 2 for an
// errUsage, else 1.
func fail(c *cli, name string, err error) int {
	msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
	if name != "" {
		name = " " + name
	}
	fmt.Fprintf(c.stderr, "demo%s: %s\n", name, msg)
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	return exitFail
}
