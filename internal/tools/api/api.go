// Package api writes the exported API of Go packages as sorted lines, one per
// exported identifier (and one per exported field, method and interface
// method), in the spirit of the Go distribution's api/ files:
//
//	pkg example.com/m/p, const Big untyped int = 1048576
//	pkg example.com/m/p, func New(io.Reader, ...Option) (*T, error)
//	pkg example.com/m/p, method (*T) Close() error
//	pkg example.com/m/p, type T struct, Size int64
//	pkg example.com/m/p, var ErrX error
//
// Types of the standard library are qualified by package name (io.Reader),
// all others by their import path, so that two packages of one name never
// read alike; parameter names are left out, since they are not part of the
// API. Two records differ exactly when the exported API differs, so a diff
// of records is the list of API changes.
package api

import (
	"fmt"
	"go/types"
	"sort"
	"strings"
)

// Lines returns the API record of pkg, sorted.
func Lines(pkg *types.Package) []string {
	w := &writer{pkg: pkg}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			w.emit("const %s %s = %s", name, w.typ(obj.Type()), obj.Val().ExactString())
		case *types.Var:
			w.emit("var %s %s", name, w.typ(obj.Type()))
		case *types.Func:
			w.emit("func %s%s", name, w.signature(obj.Type().(*types.Signature)))
		case *types.TypeName:
			w.typeName(obj)
		}
	}
	sort.Strings(w.lines)
	return w.lines
}

type writer struct {
	pkg   *types.Package
	lines []string
}

func (w *writer) emit(format string, args ...any) {
	w.lines = append(w.lines, "pkg "+w.pkg.Path()+", "+fmt.Sprintf(format, args...))
}

// qualify names a package other than the one recorded: by name for the
// standard library (no dot in the first path element), else by path.
func (w *writer) qualify(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	first, _, _ := strings.Cut(p.Path(), "/")
	if !strings.Contains(first, ".") {
		return p.Name()
	}
	return p.Path()
}

func (w *writer) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Signature:
		return "func" + w.signature(t)
	}
	return types.TypeString(t, w.qualify)
}

// signature prints a signature without parameter names: "(T, ...U) (V, error)".
func (w *writer) signature(sig *types.Signature) string {
	var b strings.Builder
	if tp := sig.TypeParams(); tp != nil && tp.Len() > 0 {
		b.WriteString(w.typeParams(tp))
	}
	b.WriteString("(")
	params := sig.Params()
	for i := range params.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			b.WriteString("..." + w.typ(t.(*types.Slice).Elem()))
			continue
		}
		b.WriteString(w.typ(t))
	}
	b.WriteString(")")
	results := sig.Results()
	switch results.Len() {
	case 0:
	case 1:
		b.WriteString(" " + w.typ(results.At(0).Type()))
	default:
		b.WriteString(" (")
		for i := range results.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(w.typ(results.At(i).Type()))
		}
		b.WriteString(")")
	}
	return b.String()
}

func (w *writer) typeParams(tp *types.TypeParamList) string {
	parts := make([]string, tp.Len())
	for i := range tp.Len() {
		p := tp.At(i)
		parts[i] = p.Obj().Name() + " " + w.typ(p.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (w *writer) typeName(obj *types.TypeName) {
	name := obj.Name()
	if obj.IsAlias() {
		rhs := obj.Type()
		if a, ok := rhs.(*types.Alias); ok {
			rhs = a.Rhs()
		}
		w.emit("type %s = %s", name, w.typ(rhs))
		return
	}
	named := obj.Type().(*types.Named)
	decl := name
	if tp := named.TypeParams(); tp != nil && tp.Len() > 0 {
		decl += w.typeParams(tp)
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.emit("type %s struct", decl)
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				w.emit("type %s struct, embedded %s", name, w.typ(f.Type()))
				continue
			}
			w.emit("type %s struct, %s %s", name, f.Name(), w.typ(f.Type()))
		}
	case *types.Interface:
		var exported []string
		unexported := false
		for i := range u.NumMethods() {
			m := u.Method(i)
			if !m.Exported() {
				unexported = true
				continue
			}
			exported = append(exported, m.Name())
			w.emit("type %s interface, %s%s", name, m.Name(), w.signature(m.Type().(*types.Signature)))
		}
		if unexported {
			exported = append(exported, "unexported methods")
		}
		sort.Strings(exported)
		if len(exported) == 0 {
			w.emit("type %s interface {}", decl)
		} else {
			w.emit("type %s interface { %s }", decl, strings.Join(exported, ", "))
		}
		for i := range u.NumEmbeddeds() {
			if e := u.EmbeddedType(i); !types.IsInterface(e) { // a constraint's type terms
				w.emit("type %s interface, constraint %s", name, w.typ(e))
			}
		}
		return // an interface's methods are its method set
	default:
		w.emit("type %s %s", decl, w.typ(u))
	}
	w.methods(named)
}

// methods records the exported methods of named and of *named, promoted ones
// included, each with the receiver it needs.
func (w *writer) methods(named *types.Named) {
	value := types.NewMethodSet(named)
	all := types.NewMethodSet(types.NewPointer(named))
	for i := range all.Len() {
		sel := all.At(i)
		m := sel.Obj()
		if !m.Exported() {
			continue
		}
		recv := named.Obj().Name()
		if value.Lookup(m.Pkg(), m.Name()) == nil {
			recv = "*" + recv
		}
		w.emit("method (%s) %s%s", recv, m.Name(), w.signature(m.Type().(*types.Signature)))
	}
}
