package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/teebody/teebody/pkg/transport"
)

// usageError is an error that is the command line's or the environment's
// fault: exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErr is a usageError with a message.
func usageErr(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// fail prints err for command name ("" for the five-way run) and returns
// its exit status: 2 for a usageError, else 1.
func fail(c *cli, name string, err error) int {
	if name != "" {
		name = " " + name
	}
	fmt.Fprintf(c.stderr, "demo%s: %v\n", name, err)
	if _, ok := errors.AsType[usageError](err); ok {
		return exitUsage
	}
	return exitFail
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

// setFlags are the names of the flags set on fs's command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// sizeFlag is a byte size in the forms transport.ParseSize accepts
// ("1048576", "512MiB", "50Mi", "1G").
type sizeFlag int64

func (s *sizeFlag) String() string { return fmt.Sprint(int64(*s)) }

func (s *sizeFlag) Set(v string) error {
	n, err := transport.ParseSize(v)
	*s = sizeFlag(n)
	return err
}
