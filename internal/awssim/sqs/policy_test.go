package sqs

import "testing"

func TestAllowsService(t *testing.T) {
	const events = "events.amazonaws.com"
	cases := []struct {
		name   string
		policy string
		want   bool
	}{
		{"no policy", ``, false},
		{"karpenter CloudFormation policy",
			`{"Version":"2012-10-17","Id":"EC2InterruptionPolicy","Statement":[
			  {"Effect":"Allow","Principal":{"Service":["events.amazonaws.com","sqs.amazonaws.com"]},"Action":"sqs:SendMessage","Resource":"arn:aws:sqs:us-west-2:111122223333:demo"},
			  {"Sid":"DenyHTTP","Effect":"Deny","Action":"sqs:*","Resource":"arn:aws:sqs:us-west-2:111122223333:demo","Condition":{"Bool":{"aws:SecureTransport":false}},"Principal":"*"}]}`, true},
		{"single statement object", `{"Statement":{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:*"}}`, true},
		{"other service only", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage"}]}`, false},
		{"other action only", `{"Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:ReceiveMessage"}]}`, false},
		{"unconditional deny wins", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"*"},{"Effect":"Deny","Principal":"*","Action":"sqs:SendMessage"}]}`, false},
	}
	for _, tc := range cases {
		if got := allowsService(tc.policy, events, "arn:aws:events:us-west-2:111122223333:rule/demo-spot"); got != tc.want {
			t.Errorf("%s: allowsService = %v, want %v", tc.name, got, tc.want)
		}
	}
}
