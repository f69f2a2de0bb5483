package structhash

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

type inner struct {
	A string
	B []int
}

type sample struct {
	Name     string            `json:"name"`
	Ignored  string            `json:"ignored" hash:"ignore"`
	Size     resource.Quantity `json:"size" hash:"string"`
	Labels   map[string]string `json:"labels"`
	Items    []inner           `json:"items"`
	Optional *inner            `json:"optional,omitempty"`
	When     time.Time         `json:"when"`
	Count    int               `json:"count"`
	Flag     bool              `json:"flag"`
}

func base() sample {
	return sample{
		Name:   "x",
		Size:   resource.MustParse("1Gi"),
		Labels: map[string]string{"a": "1", "b": "2"},
		Items:  []inner{{A: "p", B: []int{1, 2}}, {A: "q"}},
		When:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Count:  3,
	}
}

func TestHashEqualities(t *testing.T) {
	want := Hash(base())
	for name, mutate := range map[string]func(*sample){
		"ignored field":         func(s *sample) { s.Ignored = "changed" },
		"quantity respelt":      func(s *sample) { s.Size = resource.MustParse("1024Mi") },
		"slice order":           func(s *sample) { s.Items = []inner{s.Items[1], {A: "p", B: []int{2, 1}}} },
		"slice duplicates":      func(s *sample) { s.Items = append(s.Items, s.Items[0]) },
		"nil pointer vs absent": func(s *sample) { s.Optional = nil },
		"zero bool":             func(s *sample) { s.Flag = false },
		"time zone":             func(s *sample) { s.When = s.When.In(time.FixedZone("x", 3600)) },
		"empty slice vs nil":    func(s *sample) { s.Items[1].B = []int{} },
	} {
		s := base()
		mutate(&s)
		if got := Hash(s); got != want {
			t.Errorf("%s: hash changed", name)
		}
	}
}

func TestHashDifferences(t *testing.T) {
	seen := map[string]string{Hash(base()): "base"}
	for name, mutate := range map[string]func(*sample){
		"name":           func(s *sample) { s.Name = "y" },
		"quantity":       func(s *sample) { s.Size = resource.MustParse("2Gi") },
		"map value":      func(s *sample) { s.Labels["a"] = "2" },
		"map key":        func(s *sample) { s.Labels = map[string]string{"c": "1", "b": "2"} },
		"nested slice":   func(s *sample) { s.Items[0].B = []int{1, 3} },
		"pointer set":    func(s *sample) { s.Optional = &inner{A: "z"} },
		"time":           func(s *sample) { s.When = s.When.Add(time.Second) },
		"count":          func(s *sample) { s.Count = 4 },
		"flag":           func(s *sample) { s.Flag = true },
		"value to other": func(s *sample) { s.Labels = map[string]string{"a": "12"} },
	} {
		s := base()
		mutate(&s)
		got := Hash(s)
		if other, dup := seen[got]; dup {
			t.Errorf("%s: same hash as %s", name, other)
		}
		seen[got] = name
	}
}
