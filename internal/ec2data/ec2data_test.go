package ec2data

import (
	"encoding/json"
	"testing"
)

// The shipped tables parse, cover the regions the product prices, and
// agree with known published values.
func TestTablesParse(t *testing.T) {
	od := OnDemand()
	for _, region := range []string{"us-east-1", "us-west-2", "us-gov-west-1"} {
		if len(od[region]) < 100 {
			t.Errorf("%s: %d on-demand prices", region, len(od[region]))
		}
	}
	if p := od["us-east-1"]["m5.large"]; p != 0.096 {
		t.Errorf("us-east-1 m5.large on-demand $%v/h, want the published $0.096", p)
	}
	if l := VPCLimits()["m5.large"]; l.BranchInterfaces != 9 || l.IPv4PerInterface != 10 {
		t.Errorf("m5.large VPC limits %+v, want 9 branch interfaces and 10 IPv4 per interface", l)
	}
	if l := VPCLimits()["t2.micro"]; l.BranchInterfaces != 0 {
		t.Errorf("t2.micro cannot trunk, got %+v", l)
	}
	var ebs map[string]map[string]map[string]float64
	if err := json.Unmarshal(EBSPricesJSON, &ebs); err != nil {
		t.Fatal(err)
	}
	if gp3 := ebs["us-east-1"]["gp3"]; gp3["gbMonth"] != 0.08 || gp3["includedIOPS"] != 3000 {
		t.Errorf("us-east-1 gp3 %v, want $0.08/GB-month with 3,000 IOPS included", gp3)
	}
}
