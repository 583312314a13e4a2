package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The public doors (the packages of `public`: the embedding API, the plugin contract, the
// config model) are learnt from godoc alone. So every exported name they declare has a
// doc comment, and their exported declarations mention only types an outside program can
// name: none from a package under an internal/ directory, which it cannot import.
//
// An exported interface's exported methods have doc comments too: a program implements
// them from godoc.
//
// What is judged, by syntax (go/parser, no type checking): functions and methods of
// exported types (their parameters, results and type parameters), exported types (a
// struct's exported and embedded fields, an interface's methods and embedded types, an
// alias's or other definition's whole type) and exported consts and vars that spell out
// their type. A var whose type is only inferred from an internal call is not seen.

// doorViolations checks the package in dir (its non-test .go files) as a door. rel is
// its path in the module, for the messages.
func doorViolations(dir, rel string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []string
	files := 0
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files++
		c := doorFile{fset: fset, where: path.Join(rel, name), pkg: f.Name.Name, imports: internalImports(f)}
		for _, d := range f.Decls {
			c.decl(d)
		}
		out = append(out, c.out...)
	}
	if files == 0 {
		return nil, fmt.Errorf("%s: no Go files: the door is gone, or moved", rel)
	}
	sort.Strings(out)
	return out, nil
}

// internalImports are a file's imports of packages under an internal/ directory, by the
// name the file uses for them.
func internalImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || !isInternal(p) {
			continue
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = p
	}
	return m
}

// isInternal reports whether an import path is under an internal/ directory.
func isInternal(p string) bool {
	return strings.HasPrefix(p, "internal/") || strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") || p == "internal"
}

// doorFile checks one file of a door.
type doorFile struct {
	fset    *token.FileSet
	where   string
	pkg     string
	imports map[string]string
	out     []string
}

func (c *doorFile) report(pos token.Pos, format string, args ...any) {
	c.out = append(c.out, fmt.Sprintf("%s:%d: ", c.where, c.fset.Position(pos).Line)+fmt.Sprintf(format, args...))
}

func (c *doorFile) decl(d ast.Decl) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		c.funcDecl(d)
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				c.typeSpec(d, s)
			case *ast.ValueSpec:
				c.valueSpec(d, s)
			}
		}
	}
}

func (c *doorFile) funcDecl(d *ast.FuncDecl) {
	name := d.Name.Name
	if d.Recv != nil && len(d.Recv.List) > 0 {
		recv := receiverBase(d.Recv.List[0].Type)
		if !ast.IsExported(recv) {
			return // not on the door: godoc shows no method of an unexported type
		}
		name = recv + "." + name
	}
	if !d.Name.IsExported() {
		return
	}
	if !hasDoc(d.Doc) {
		c.report(d.Pos(), "%s.%s has no doc comment: a door is learnt from godoc", c.pkg, name)
	}
	c.mentions(d.Type, c.pkg+"."+name)
}

func (c *doorFile) typeSpec(d *ast.GenDecl, s *ast.TypeSpec) {
	if !s.Name.IsExported() {
		return
	}
	name := c.pkg + "." + s.Name.Name
	if !hasDoc(s.Doc) && !hasDoc(d.Doc) && !hasDoc(s.Comment) {
		c.report(s.Pos(), "%s has no doc comment: a door is learnt from godoc", name)
	}
	if s.TypeParams != nil {
		c.mentions(s.TypeParams, name)
	}
	if s.Assign.IsValid() {
		c.mentions(s.Type, name) // an alias is the type it names
		return
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		for _, f := range t.Fields.List {
			for _, fn := range fieldNames(f) {
				if ast.IsExported(fn) {
					c.mentions(f.Type, name+"."+fn)
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 || m.Names[0].IsExported() {
				what := name
				if len(m.Names) > 0 {
					what += "." + m.Names[0].Name
					if !hasDoc(m.Doc) && !hasDoc(m.Comment) {
						c.report(m.Pos(), "%s has no doc comment: a door's interface is implemented from godoc", what)
					}
				}
				c.mentions(m.Type, what)
			}
		}
	default:
		c.mentions(s.Type, name)
	}
}

// fieldNames are a struct field's names; an embedded field's is its type's name.
func fieldNames(f *ast.Field) []string {
	if len(f.Names) == 0 {
		t := f.Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		switch t := t.(type) {
		case *ast.SelectorExpr:
			return []string{t.Sel.Name}
		case *ast.Ident:
			return []string{t.Name}
		}
		return nil
	}
	var out []string
	for _, n := range f.Names {
		out = append(out, n.Name)
	}
	return out
}

func (c *doorFile) valueSpec(d *ast.GenDecl, s *ast.ValueSpec) {
	for _, n := range s.Names {
		if !n.IsExported() {
			continue
		}
		name := c.pkg + "." + n.Name
		if !hasDoc(s.Doc) && !hasDoc(d.Doc) && !hasDoc(s.Comment) {
			c.report(n.Pos(), "%s has no doc comment: a door is learnt from godoc", name)
		}
		if s.Type != nil {
			c.mentions(s.Type, name)
		}
	}
}

// mentions reports every type of an internal package that n spells out.
func (c *doorFile) mentions(n ast.Node, what string) {
	ast.Inspect(n, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok {
			if p, ok := c.imports[x.Name]; ok {
				c.report(sel.Pos(), "%s mentions %s.%s of %s, which a program outside the module cannot import: give the door a type of its own", what, x.Name, sel.Sel.Name, p)
			}
		}
		return true
	})
}

// hasDoc reports whether a comment group has any text.
func hasDoc(g *ast.CommentGroup) bool { return g != nil && strings.TrimSpace(g.Text()) != "" }

// TestDoors checks every public package as a door.
func TestDoors(t *testing.T) {
	root := moduleRoot(t)
	doors := make([]string, 0, len(public))
	for rel := range public {
		doors = append(doors, rel)
	}
	slices.Sort(doors)
	for _, rel := range doors {
		v, err := doorViolations(filepath.Join(root, filepath.FromSlash(rel)), rel)
		if err != nil {
			t.Error(err)
		}
		for _, s := range v {
			t.Error(s)
		}
	}
}

// TestDoorRulesCatchWrongDoors runs the door checks on a fake door that breaks each rule,
// and keeps them elsewhere.
func TestDoorRulesCatchWrongDoors(t *testing.T) {
	src := `// Package door is a fake door.
package door

import (
	"net/http"

	"example.com/gw/internal/store"
	reg "example.com/gw/internal/registry"
	"example.com/gw/plugin"
)

// Options are a host's choices.
type Options struct {
	// Store is internal: an outside program cannot name it.
	Store store.Store
	// Kinds too, under another name.
	Kinds map[string]reg.PluginKind
	// Client is public.
	Client *http.Client
	kept   store.Store
}

type Undocumented struct{}

// Alias is an internal type under a door's name.
type Alias = store.Store

// Defined is a door's own type over an internal one's shape.
type Defined reg.PluginKinds

// Kind is a door interface.
type Kind interface {
	// Open gives out an internal type.
	Open() reg.PluginKind
	plugin.Plugin
	Name() string
}

// Open is documented, its result is not public.
func Open(spec string) (store.Store, error) { return nil, nil }

func Bare(p plugin.Plugin) {}

// Close is documented.
func (o *Options) Close() error { return nil }

func (o *Options) Reset() {}

// private types' methods are not on the door.
type private struct{}

func (private) Exported(s store.Store) {}

func open(s store.Store) {}

// Version is documented.
const Version = "1"

const Loose = 2

const (
	// Grouped is documented.
	Grouped = 3
	Trailing = 4 // Trailing is documented at its end.
)

// Default is an internal typed var.
var Default store.Store
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "door.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "door_test.go"), []byte("package door\n\nfunc TestX() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := doorViolations(dir, "door")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"door/door.go:15: door.Options.Store mentions store.Store of example.com/gw/internal/store",
		"door/door.go:17: door.Options.Kinds mentions reg.PluginKind of example.com/gw/internal/registry",
		"door/door.go:23: door.Undocumented has no doc comment",
		"door/door.go:26: door.Alias mentions store.Store",
		"door/door.go:29: door.Defined mentions reg.PluginKinds",
		"door/door.go:34: door.Kind.Open mentions reg.PluginKind",
		"door/door.go:36: door.Kind.Name has no doc comment",
		"door/door.go:40: door.Open mentions store.Store",
		"door/door.go:42: door.Bare has no doc comment",
		"door/door.go:47: door.Options.Reset has no doc comment",
		"door/door.go:59: door.Loose has no doc comment",
		"door/door.go:68: door.Default mentions store.Store",
	}
	joined := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("missed %q; reported:\n%s", w, joined)
		}
	}
	if len(got) != len(want) {
		t.Errorf("reported %d problems, want %d:\n%s", len(got), len(want), joined)
	}
	if _, err := doorViolations(t.TempDir(), "gone"); err == nil {
		t.Error("an empty door passed")
	}
}
