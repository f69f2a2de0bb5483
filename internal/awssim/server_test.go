package awssim_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	awsssm "github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
)

var ctx = context.Background()

func start(t testing.TB, opts awssim.Options) *awssim.Server {
	t.Helper()
	if opts.PendingDuration == 0 {
		opts.PendingDuration = 20 * time.Millisecond
	}
	if opts.ShuttingDownDuration == 0 {
		opts.ShuttingDownDuration = 20 * time.Millisecond
	}
	s, err := awssim.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func apiCode(t *testing.T, err error) string {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is not an AWS API error", err)
	}
	return ae.ErrorCode()
}

// TestEnvironmentReachesEveryService configures the SDK the way users do,
// from the environment Env returns, and calls each service once.
func TestEnvironmentReachesEveryService(t *testing.T) {
	s := start(t, awssim.Options{ClusterName: "env-test"})
	for k, v := range s.Env() {
		t.Setenv(k, v)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ec2.NewFromConfig(cfg).DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		t.Errorf("ec2: %v", err)
	}
	param, err := awsssm.NewFromConfig(cfg).GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/standard/recommended/image_id")})
	if err != nil {
		t.Fatalf("ssm: %v", err)
	}
	images, err := ec2.NewFromConfig(cfg).DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{*param.Parameter.Value}})
	if err != nil || !strings.HasPrefix(*images.Images[0].Name, "amazon-eks-node-al2023-x86_64-standard-1.36-") {
		t.Errorf("the AL2023 parameter points at %v (%v)", images, err)
	}
	// EKS still publishes the previous minor's images (Karpenter's drift
	// and AMI suites pin one); they are no release of the cluster's minor.
	previous, err := awsssm.NewFromConfig(cfg).GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/x86_64/standard/recommended/image_id")})
	if err != nil {
		t.Fatalf("ssm, the previous minor's AL2023 image: %v", err)
	}
	images, err = ec2.NewFromConfig(cfg).DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{*previous.Parameter.Value}})
	if err != nil || len(images.Images) != 1 || !strings.HasPrefix(*images.Images[0].Name, "amazon-eks-node-al2023-x86_64-standard-1.35-") {
		t.Errorf("the previous minor's AL2023 parameter points at %v (%v)", images, err)
	}
	for _, r := range s.EC2.Images() {
		if r.Kubernetes != "1.36" {
			t.Errorf("Images lists a %s release: %+v", r.Kubernetes, r)
		}
	}
	neuron, err := awsssm.NewFromConfig(cfg).GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/neuron/recommended/image_id")})
	if err != nil {
		t.Fatalf("ssm, AL2023 Neuron image: %v", err)
	}
	images, err = ec2.NewFromConfig(cfg).DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{*neuron.Parameter.Value}})
	if err != nil || len(images.Images) != 1 || !strings.HasPrefix(*images.Images[0].Name, "amazon-eks-node-al2023-x86_64-neuron-1.36-") {
		t.Errorf("the AL2023 Neuron parameter points at %v (%v)", images, err)
	}
	if _, err := pricing.NewFromConfig(cfg, func(o *pricing.Options) { o.Region = "us-east-1" }).GetProducts(ctx, &pricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"), MaxResults: aws.Int32(1),
		Filters: []pricingtypes.Filter{{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String("instanceType"), Value: aws.String("m5.large")}},
	}); err != nil {
		t.Errorf("pricing: %v", err)
	}
	if _, err := sqs.NewFromConfig(cfg).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("env-test")}); err != nil {
		t.Errorf("sqs: %v", err)
	}
	if _, err := eventbridge.NewFromConfig(cfg).ListRules(ctx, &eventbridge.ListRulesInput{}); err != nil {
		t.Errorf("events: %v", err)
	}
	if _, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil {
		t.Errorf("sts: %v", err)
	}
	_, err = awseks.NewFromConfig(cfg).DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String("env-test")})
	if code := apiCode(t, err); code != "ResourceNotFoundException" {
		t.Errorf("eks without a cluster: %s", code)
	}

	want := map[string]string{"ec2": "DescribeAvailabilityZones", "ssm": "GetParameter", "pricing": "GetProducts", "sqs": "CreateQueue",
		"events": "ListRules", "sts": "GetCallerIdentity", "eks": "DescribeCluster"}
	for service, op := range want {
		reqs := s.Requests().Requests(service, op)
		if len(reqs) == 0 {
			t.Errorf("no %s %s recorded", service, op)
			continue
		}
		if reqs[0].AccessKeyID != s.Options().AccessKeyID {
			t.Errorf("%s %s recorded caller %q", service, op, reqs[0].AccessKeyID)
		}
	}
	eksReq := s.Requests().Requests("eks", "DescribeCluster")[0]
	if eksReq.Status != 404 || eksReq.ErrorCode != "ResourceNotFoundException" {
		t.Errorf("eks request recorded as %d %q", eksReq.Status, eksReq.ErrorCode)
	}
	if q := s.Requests().Requests("sqs", "CreateQueue")[0]; q.Parameters["QueueName"] != "env-test" {
		t.Errorf("sqs parameters recorded as %v", q.Parameters)
	}
}

func TestThrottlingSurfacesAsTheSDKsThrottleError(t *testing.T) {
	s := start(t, awssim.Options{})
	if _, err := s.Faults().Add(fault.Fault{Service: "ec2", Operation: "DescribeInstances", Kind: fault.Throttle}); err != nil {
		t.Fatal(err)
	}
	client := ec2.NewFromConfig(s.AWSConfig(), func(o *ec2.Options) {
		o.Retryer = retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 3; o.MaxBackoff = time.Millisecond })
	})
	_, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if code := apiCode(t, err); code != "RequestLimitExceeded" {
		t.Fatalf("code %s, want RequestLimitExceeded", code)
	}
	if !retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool() {
		t.Errorf("the SDK does not classify %v as throttling", err)
	}
	var re *retry.MaxAttemptsError
	if !errors.As(err, &re) {
		t.Errorf("error %v: the SDK did not retry the throttled call", err)
	}
	recs := s.Requests().Requests("ec2", "DescribeInstances")
	if len(recs) != 3 || !recs[0].Injected || recs[0].Status != 503 || recs[0].ErrorCode != "RequestLimitExceeded" {
		t.Errorf("recorded %d attempts, first %+v", len(recs), recs[0])
	}
	if _, err := client.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		t.Errorf("other operations are throttled too: %v", err)
	}

	s.Faults().Clear()
	s.Faults().Add(fault.Fault{Service: "ssm", Kind: fault.Throttle, Count: 1})
	ssmClient := awsssm.NewFromConfig(s.AWSConfig(), func(o *awsssm.Options) { o.RetryMaxAttempts = 1 })
	_, err = ssmClient.GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String("/x")})
	if code := apiCode(t, err); code != "ThrottlingException" {
		t.Errorf("ssm throttle: %s", code)
	}
	_, err = ssmClient.GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String("/x")})
	if code := apiCode(t, err); code != "ParameterNotFound" {
		t.Errorf("after the one throttle: %s", code)
	}

	s.Faults().Add(fault.Fault{Service: "ec2", Operation: "DescribeImages", Kind: fault.ServerError})
	s.Faults().Add(fault.Fault{Service: "ec2", Operation: "DescribeVpcs", Kind: fault.Latency, Latency: 50 * time.Millisecond})
	_, err = ec2.NewFromConfig(s.AWSConfig(), func(o *ec2.Options) { o.RetryMaxAttempts = 1 }).DescribeImages(ctx, &ec2.DescribeImagesInput{})
	if code := apiCode(t, err); code != "InternalError" {
		t.Errorf("server error fault: %s", code)
	}
	if _, err := client.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{}); err != nil {
		t.Fatal(err)
	}
	if d := s.Requests().Requests("ec2", "DescribeVpcs")[0].Duration; d < 50*time.Millisecond {
		t.Errorf("latency fault: the call took %v", d)
	}
}

// TestResponseLatencyCompletesTheWorkOfAnAbandonedCall: the caller gives up
// while the response is held, yet the instance it asked for exists, as
// when a controller dies inside a launch that EC2 completed.
func TestResponseLatencyCompletesTheWorkOfAnAbandonedCall(t *testing.T) {
	s := start(t, awssim.Options{})
	s.Faults().Add(fault.Fault{Service: "ec2", Operation: "RunInstances", Kind: fault.ResponseLatency, Latency: 5 * time.Second, Count: 1})
	client := ec2.NewFromConfig(s.AWSConfig(), func(o *ec2.Options) { o.RetryMaxAttempts = 1 })
	img := s.EC2.Images()[0].ImageID
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := client.RunInstances(short, &ec2.RunInstancesInput{
		ImageId: aws.String(img), InstanceType: ec2types.InstanceTypeM5Large, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: aws.String(s.EC2.Network().PrivateSubnetIDs[0]),
	})
	if err == nil {
		t.Fatal("RunInstances answered although its response was held for 5s and the caller waited 300ms")
	}
	out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range out.Reservations {
		n += len(r.Instances)
	}
	if n != 1 {
		t.Errorf("%d instances after the abandoned RunInstances, want the 1 it launched", n)
	}
}

func TestInstanceEventsReachAnSQSQueueThroughEventBridge(t *testing.T) {
	s := start(t, awssim.Options{})
	cfg := s.AWSConfig()
	arn := s.SQS.QueueARN("interruptions")
	// EventBridge may deliver only where the queue policy lets it, as in AWS.
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["events.amazonaws.com"]},"Action":"sqs:SendMessage","Resource":"` + arn + `"}]}`
	q, err := sqs.NewFromConfig(cfg).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("interruptions"), Attributes: map[string]string{"Policy": policy}})
	if err != nil {
		t.Fatal(err)
	}
	eb := eventbridge.NewFromConfig(cfg)
	rules := map[string]string{"state": `{"source":["aws.ec2"],"detail-type":["EC2 Instance State-change Notification"]}`,
		"spot": `{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}`}
	for name, pattern := range rules {
		if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventPattern: aws.String(pattern)}); err != nil {
			t.Fatal(err)
		}
		if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name), Targets: []ebtypes.Target{{
			Id: aws.String("q"), Arn: aws.String(arn),
		}}}); err != nil {
			t.Fatal(err)
		}
	}
	ec2c := ec2.NewFromConfig(cfg)
	images, _ := ec2c.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-x86_64-standard-*"}}}})
	run, err := ec2c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		InstanceMarketOptions: &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}})
	if err != nil {
		t.Fatal(err)
	}
	id := *run.Instances[0].InstanceId
	resp, err := http.Post(s.URL()+"/_awssim/ec2/instances/"+id+"/spot-interruption", "application/json", strings.NewReader(`{"noticeSeconds":0.05}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("spot interruption through the admin endpoint: %v %v", resp, err)
	}
	resp.Body.Close()
	kinds := map[string]int{}
	deadline := time.Now().Add(10 * time.Second)
	for kinds["terminated"] == 0 && time.Now().Before(deadline) {
		out, err := sqs.NewFromConfig(cfg).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var e struct {
				DetailType string         `json:"detail-type"`
				Source     string         `json:"source"`
				Detail     map[string]any `json:"detail"`
			}
			if err := json.Unmarshal([]byte(*m.Body), &e); err != nil {
				t.Fatal(err)
			}
			if e.Detail["instance-id"] != id {
				t.Errorf("event for %v", e.Detail["instance-id"])
			}
			if e.DetailType == "EC2 Spot Instance Interruption Warning" {
				kinds["warning"]++
			} else {
				kinds[e.Detail["state"].(string)]++
			}
		}
	}
	for _, k := range []string{"pending", "running", "warning", "shutting-down", "terminated"} {
		if kinds[k] != 1 {
			t.Errorf("%d %q messages, want 1 (all: %v)", kinds[k], k, kinds)
		}
	}
}

func TestAdminEndpointsDriveFaultsCapacityAndAMIs(t *testing.T) {
	s := start(t, awssim.Options{})
	post := func(path, body string) map[string]any {
		t.Helper()
		resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d %v", path, resp.StatusCode, out)
		}
		return out
	}
	post("/_awssim/faults", `{"service":"ec2","operation":"DescribeSubnets","kind":"throttle","count":1}`)
	client := ec2.NewFromConfig(s.AWSConfig(), func(o *ec2.Options) { o.RetryMaxAttempts = 1 })
	_, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	if code := apiCode(t, err); code != "RequestLimitExceeded" {
		t.Errorf("fault from the admin endpoint: %s", code)
	}

	post("/_awssim/ec2/capacity", `{"instanceType":"m5.large","zone":"us-west-2a","capacityType":"on-demand","available":0}`)
	if got := s.EC2.Capacity("m5.large", "us-west-2a", "on-demand"); got != 0 {
		t.Errorf("capacity after the admin call: %d", got)
	}

	ssmClient := awsssm.NewFromConfig(s.AWSConfig())
	name := "/aws/service/bottlerocket/aws-k8s-1.36/arm64/latest/image_id"
	before, err := ssmClient.GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	rel := post("/_awssim/amis", `{"family":"bottlerocket","architecture":"arm64","variant":"standard"}`)
	after, err := ssmClient.GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if *after.Parameter.Value == *before.Parameter.Value || *after.Parameter.Value != rel["ImageID"] {
		t.Errorf("latest Bottlerocket arm64 moved from %s to %s; release %v", *before.Parameter.Value, *after.Parameter.Value, rel)
	}
	pinned, err := ssmClient.GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String("/aws/service/bottlerocket/aws-k8s-1.36/arm64/1.50.0/image_id")})
	if err != nil || *pinned.Parameter.Value != *before.Parameter.Value {
		t.Errorf("the pinned 1.50.0 release moved: %v %v", pinned, err)
	}

	resp, err := http.Get(s.URL() + "/_awssim/requests?service=ec2&operation=DescribeSubnets")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reqs []awssim.Request
	if err := json.NewDecoder(resp.Body).Decode(&reqs); err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[0].ErrorCode != "RequestLimitExceeded" || !reqs[0].Injected {
		t.Errorf("request log over HTTP: %+v", reqs)
	}
}

func TestLaunchesNeedAnExistingInstanceProfile(t *testing.T) {
	s := start(t, awssim.Options{})
	cfg := s.AWSConfig()
	client := ec2.NewFromConfig(cfg)
	images, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-x86_64-standard-*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	launch := func() (*ec2.RunInstancesOutput, error) {
		return client.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
			IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Name: aws.String("node-profile")}})
	}
	_, err = launch()
	if code := apiCode(t, err); code != "InvalidParameterValue" {
		t.Fatalf("launch with a missing profile: %s", code)
	}
	profile, err := iam.NewFromConfig(cfg).CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("node-profile")})
	if err != nil {
		t.Fatal(err)
	}
	out, err := launch()
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Instances[0].IamInstanceProfile; *got.Arn != *profile.InstanceProfile.Arn || *got.Id != *profile.InstanceProfile.InstanceProfileId {
		t.Errorf("instance profile %s/%s, IAM has %s/%s", *got.Arn, *got.Id, *profile.InstanceProfile.Arn, *profile.InstanceProfile.InstanceProfileId)
	}
}

func TestEveryServiceListsItsOperationsAndConstraints(t *testing.T) {
	s := start(t, awssim.Options{ClusterName: "ops-test"})
	ops := s.Operations()
	for _, svc := range []string{"ec2", "ssm", "pricing", "sqs", "events", "iam", "sts", "eks"} {
		if len(ops[svc]) == 0 {
			t.Errorf("%s lists no operations", svc)
		}
	}
	if rules := ops["ec2"]["DescribeInstanceTypes"]; len(rules) == 0 {
		t.Error("DescribeInstanceTypes lists no constraints")
	}
	if _, ok := ops["ssm"]["GetParametersByPath"]; !ok {
		t.Error("ssm does not list GetParametersByPath")
	}
}
