package v1

import "fmt"

// BurstableCPULabelKey, set to BurstableCPUFull in a NodePool's template
// labels, opts the pool in to counting a burstable (t-family) type's full
// CPU when sizing nodes. Without it a burstable type counts only its
// baseline: the instance price buys the baseline, and CPU above it is paid
// in credits or unlimited-mode surplus charges. Karpenter has no such
// setting; as a template label it also marks the pool's nodes.
const (
	BurstableCPULabelKey = "joist.dev/burstable-cpu"
	BurstableCPUFull     = "full"
)

// BurstableCPU reports whether template labels opt in to burstable types'
// full CPU; any value but BurstableCPUFull is an error.
func BurstableCPU(labels map[string]string) (bool, error) {
	v, ok := labels[BurstableCPULabelKey]
	if !ok {
		return false, nil
	}
	if v != BurstableCPUFull {
		return false, fmt.Errorf("label %s is %q: the only value is %q (count burstable types' full CPU); remove the label to count their baseline CPU", BurstableCPULabelKey, v, BurstableCPUFull)
	}
	return true, nil
}
