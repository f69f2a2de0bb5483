package v1

import (
	"strings"
	"testing"
)

func TestBurstableCPU(t *testing.T) {
	if on, err := BurstableCPU(nil); on || err != nil {
		t.Errorf("no label: %v, %v; want baseline, no error", on, err)
	}
	if on, err := BurstableCPU(map[string]string{BurstableCPULabelKey: "full"}); !on || err != nil {
		t.Errorf("full: %v, %v; want the full CPU", on, err)
	}
	if on, err := BurstableCPU(map[string]string{BurstableCPULabelKey: "true"}); on || err == nil || !strings.Contains(err.Error(), `only value is "full"`) {
		t.Errorf("true: %v, %v; want an error naming the only value", on, err)
	}
}
