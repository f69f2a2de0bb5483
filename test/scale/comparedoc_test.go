package scale

import (
	"strings"
	"testing"
)

func TestCompareSectionIsReplacedAndKept(t *testing.T) {
	doc := "# Performance\n\ntable\n"
	first := replaceCompareSection(doc, compareBegin+"\none\n"+compareEnd+"\n")
	second := replaceCompareSection(first, compareBegin+"\ntwo\n"+compareEnd+"\n")
	if strings.Contains(second, "one") || strings.Count(second, compareBegin) != 1 || !strings.HasPrefix(second, doc) {
		t.Errorf("replacing the section:\n%s", second)
	}
	if got := compareSection(second); got != compareBegin+"\ntwo\n"+compareEnd {
		t.Errorf("section = %q", got)
	}
	if compareSection(doc) != "" {
		t.Error("a document without the section has one")
	}
}

func TestCompareSize(t *testing.T) {
	for _, tc := range []struct {
		size    string
		out, in int32
		bad     bool
	}{
		{"", 1000, 700, false}, {"small", 100, 72, false}, {"5000", 5000, 3500, false}, {"2000", 2000, 1400, false},
		{"5001", 0, 0, true}, {"50", 0, 0, true}, {"big", 0, 0, true},
	} {
		out, in, err := compareSize(tc.size)
		if (err != nil) != tc.bad || out != tc.out || in != tc.in {
			t.Errorf("compareSize(%q) = %d, %d, %v; want %d, %d, error %v", tc.size, out, in, err, tc.out, tc.in, tc.bad)
		}
	}
}
