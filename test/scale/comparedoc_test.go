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
