package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/path"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

type groupVersionResource = schema.GroupVersionResource

// fieldAt reads a dotted path with [i] indexes from an object; map keys
// containing dots cannot be addressed.
func fieldAt(obj map[string]any, path string) any {
	var cur any = obj
	for _, part := range strings.Split(path, ".") {
		name, rest, indexed := strings.Cut(part, "[")
		m, _ := cur.(map[string]any)
		cur = m[name]
		if indexed {
			i, _ := strconv.Atoi(strings.TrimSuffix(rest, "]"))
			l, _ := cur.([]any)
			if i >= len(l) {
				return nil
			}
			cur = l[i]
		}
	}
	return cur
}

func pathOf(name string) path.Path { return path.Root(name) }
