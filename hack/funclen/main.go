// Command funclen lists the hand-written functions longer than a limit
// (default 100 lines) under the given folders, longest first, so a review
// can see what grew: go run ./hack/funclen internal/runtime/cloud/aws
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	limit := flag.Int("over", 100, "list functions with more lines than this")
	flag.Parse()
	type fn struct {
		lines int
		where string
	}
	var found []fn
	fset := token.NewFileSet()
	for _, root := range flag.Args() {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(filepath.Base(path), "zz_generated") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if ast.IsGenerated(f) {
				return nil
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > *limit {
						found = append(found, fn{n, fmt.Sprintf("%s %s", path, fd.Name.Name)})
					}
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].lines > found[j].lines })
	for _, f := range found {
		fmt.Printf("%4d %s\n", f.lines, f.where)
	}
}
