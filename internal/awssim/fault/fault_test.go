package fault

import "testing"

func TestDecideMatchesCountsAndRates(t *testing.T) {
	in := NewInjector(1)
	if _, err := in.Add(Fault{Kind: "explode"}); err == nil {
		t.Error("unknown kind accepted")
	}
	thr, _ := in.Add(Fault{Service: "ec2", Operation: "CreateFleet", Kind: Throttle, Count: 2})
	if _, err := in.Add(Fault{Service: "ec2", Kind: Latency, Latency: 5}); err != nil {
		t.Fatal(err)
	}
	if d := in.Decide("ec2", "DescribeInstances"); d.Fail != nil || d.Delay != 5 {
		t.Errorf("DescribeInstances: %+v", d)
	}
	for i := 0; i < 2; i++ {
		if d := in.Decide("ec2", "CreateFleet"); d.Fail == nil || d.Fail.ID != thr.ID {
			t.Fatalf("CreateFleet %d not throttled: %+v", i, d)
		}
	}
	if d := in.Decide("ec2", "CreateFleet"); d.Fail != nil {
		t.Errorf("throttle fired past its count")
	}
	if d := in.Decide("sqs", "ReceiveMessage"); d.Fail != nil || d.Delay != 0 {
		t.Errorf("sqs touched by ec2 faults: %+v", d)
	}

	in.Clear()
	in.Add(Fault{Service: "ssm", Kind: ServerError, Rate: 0.25})
	fired := 0
	for i := 0; i < 4000; i++ {
		if in.Decide("ssm", "GetParameter").Fail != nil {
			fired++
		}
	}
	if fired < 800 || fired > 1200 {
		t.Errorf("rate 0.25 fired %d of 4000", fired)
	}
	if got := in.List()[0].Fired; got != fired {
		t.Errorf("List reports %d firings, saw %d", got, fired)
	}
}
