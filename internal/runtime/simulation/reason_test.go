package simulation

import (
	"errors"
	"testing"
)

func TestConciseReason(t *testing.T) {
	msg := `no NodePool can launch a node: nodepool "a": incompatible requirements: key karpenter.sh/nodepool: karpenter.sh/nodepool In [x] conflicts with karpenter.sh/nodepool In [a]; ` +
		`nodepool "x": no instance type has room for requests cpu=2k; ` +
		`nodepool "z": incompatible requirements: key karpenter.sh/nodepool: karpenter.sh/nodepool In [x] conflicts with karpenter.sh/nodepool In [z]`
	want := `no NodePool can launch a node: nodepool "x": no instance type has room for requests cpu=2k; 2 other NodePool(s) excluded by the pod's karpenter.sh/nodepool requirement`
	if got := ConciseReason(errors.New(msg)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	plain := `nodepool "a": limits exceeded; nodepool "b": no instance type fits`
	if got := ConciseReason(errors.New(plain)); got != plain {
		t.Errorf("a message without self-excluded pools changed: %s", got)
	}
}
