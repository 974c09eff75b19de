package api

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const src = `package p

import "io"

const Big = 1 << 20
const Kind Reason = 2
const hidden = 3

type Reason int

func (Reason) String() string { return "" }

var ErrX error

func New(io.Reader, ...Option) (*T, error) { return nil, nil }
func unexported() {}

type Option func(*T)

type base struct{}

func (base) Promoted() {}
func (*base) PromotedPtr() {}

type T struct {
	base
	io.Writer
	Size  int64
	inner int
}

func (*T) Close() error { return nil }
func (T) Len() int        { return 0 }
func (T) private()        {}

type Sealed interface {
	Read(p []byte) (n int, err error)
	seal()
}

type Number interface{ ~int | ~int64 }

type List[E any] struct{ Items []E }

type Alias = T
`

func TestLines(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("example.com/m/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `pkg example.com/m/p, const Big untyped int = 1048576
pkg example.com/m/p, const Kind Reason = 2
pkg example.com/m/p, func New(io.Reader, ...Option) (*T, error)
pkg example.com/m/p, method (*T) Close() error
pkg example.com/m/p, method (*T) PromotedPtr()
pkg example.com/m/p, method (Reason) String() string
pkg example.com/m/p, method (T) Len() int
pkg example.com/m/p, method (T) Promoted()
pkg example.com/m/p, method (T) Write([]byte) (int, error)
pkg example.com/m/p, type Alias = T
pkg example.com/m/p, type List struct, Items []E
pkg example.com/m/p, type List[E any] struct
pkg example.com/m/p, type Number interface {}
pkg example.com/m/p, type Number interface, constraint ~int | ~int64
pkg example.com/m/p, type Option func(*T)
pkg example.com/m/p, type Reason int
pkg example.com/m/p, type Sealed interface { Read, unexported methods }
pkg example.com/m/p, type Sealed interface, Read([]byte) (int, error)
pkg example.com/m/p, type T struct
pkg example.com/m/p, type T struct, Size int64
pkg example.com/m/p, type T struct, embedded io.Writer
pkg example.com/m/p, var ErrX error`
	got := strings.Join(Lines(pkg), "\n")
	if got != want {
		t.Errorf("Lines:\n%s\n\nwant:\n%s", got, want)
	}
}
