package eventbridge

import (
	"testing"
)

func TestPatternMatching(t *testing.T) {
	event := `{
		"version": "0", "id": "x", "detail-type": "EC2 Instance State-change Notification",
		"source": "aws.ec2", "account": "111122223333", "region": "us-west-2",
		"resources": ["arn:aws:ec2:us-west-2:111122223333:instance/i-0abc"],
		"detail": {"instance-id": "i-0abc", "state": "stopping", "count": 5, "ip": "10.0.1.7",
		           "tags": [{"key": "team", "value": "web"}], "flag": null}
	}`
	doc := decodeJSON([]byte(event)).(map[string]any)
	cases := []struct {
		name    string
		pattern string
		want    bool
	}{
		{"source and detail-type", `{"source":["aws.ec2"],"detail-type":["EC2 Instance State-change Notification"]}`, true},
		{"array is OR", `{"source":["aws.health","aws.ec2"]}`, true},
		{"wrong detail-type", `{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}`, false},
		{"nested detail", `{"detail":{"state":["stopping","stopped"]}}`, true},
		{"nested detail miss", `{"detail":{"state":["running"]}}`, false},
		{"resources array any element", `{"resources":["arn:aws:ec2:us-west-2:111122223333:instance/i-0abc"]}`, true},
		{"prefix", `{"detail":{"instance-id":[{"prefix":"i-0"}]}}`, true},
		{"prefix miss", `{"detail":{"instance-id":[{"prefix":"vol-"}]}}`, false},
		{"suffix ignore case", `{"detail":{"state":[{"suffix":{"equals-ignore-case":"PING"}}]}}`, true},
		{"anything-but value", `{"detail":{"state":[{"anything-but":"running"}]}}`, true},
		{"anything-but list miss", `{"detail":{"state":[{"anything-but":["stopping","stopped"]}]}}`, false},
		{"anything-but prefix", `{"detail":{"state":[{"anything-but":{"prefix":"stop"}}]}}`, false},
		{"exists true", `{"detail":{"instance-id":[{"exists":true}]}}`, true},
		{"exists false on missing", `{"detail":{"reason":[{"exists":false}]}}`, true},
		{"exists false on present", `{"detail":{"state":[{"exists":false}]}}`, false},
		{"missing field does not match value", `{"detail":{"reason":["x"]}}`, false},
		{"numeric range", `{"detail":{"count":[{"numeric":[">",0,"<=",5]}]}}`, true},
		{"numeric range miss", `{"detail":{"count":[{"numeric":[">",5]}]}}`, false},
		{"number equality", `{"detail":{"count":[5.0]}}`, true},
		{"null matches null", `{"detail":{"flag":[null]}}`, true},
		{"cidr", `{"detail":{"ip":[{"cidr":"10.0.0.0/16"}]}}`, true},
		{"wildcard", `{"detail":{"instance-id":[{"wildcard":"i-*c"}]}}`, true},
		{"array of objects", `{"detail":{"tags":{"key":["team"]}}}`, true},
		{"$or", `{"source":["aws.ec2"],"$or":[{"detail":{"state":["running"]}},{"detail":{"count":[5]}}]}`, true},
		{"$or none", `{"$or":[{"detail":{"state":["running"]}},{"detail":{"count":[6]}}]}`, false},
		{"account and region", `{"account":["111122223333"],"region":["us-west-2"]}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := CompilePattern(tc.pattern)
			if err != nil {
				t.Fatalf("CompilePattern: %v", err)
			}
			if got := p.Match(doc); got != tc.want {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPatternRejectsInvalid(t *testing.T) {
	for _, doc := range []string{
		`not json`,
		`["aws.ec2"]`,
		`{"source":"aws.ec2"}`,
		`{"source":[]}`,
		`{"detail":{"count":[{"numeric":[">"]}]}}`,
		`{"detail":{"count":[{"bogus":1}]}}`,
		`{"detail":{"ip":[{"cidr":"nope"}]}}`,
	} {
		if _, err := CompilePattern(doc); err == nil {
			t.Errorf("CompilePattern(%s) accepted an invalid pattern", doc)
		}
	}
}
