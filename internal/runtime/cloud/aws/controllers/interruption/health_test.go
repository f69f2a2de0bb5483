package interruption_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/interruption"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// metric reads a series of the controller-runtime registry, 0 when absent.
func metric(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue series
				}
			}
			if m.Counter != nil {
				return m.Counter.GetValue()
			}
			return m.Gauge.GetValue()
		}
	}
	return 0
}

// waitEventAbout waits until an event of the type and reason is recorded
// about the named object, and returns its note.
func waitEventAbout(t *testing.T, ctx context.Context, name, eventType, reason string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	for {
		list, err := cs.EventsV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + name})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Reason == reason && e.Type == eventType {
				return e.Note
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %s %s event about %s", eventType, reason, name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// controllerRole creates a role holding the controller's policy for the
// queue and returns a configuration signed with a session of it, as the
// controller's pod identity is.
func controllerRole(t *testing.T, ctx context.Context, role, queue string) aws.Config {
	t.Helper()
	admin := sim.AWSConfig()
	r, err := iam.NewFromConfig(admin).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(role),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"pods.eks.amazonaws.com"},"Action":["sts:AssumeRole","sts:TagSession"]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	putControllerPolicy(t, ctx, role, queue, "")
	session, err := sts.NewFromConfig(admin).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: r.Role.Arn, RoleSessionName: aws.String("controller")})
	if err != nil {
		t.Fatal(err)
	}
	cfg := admin.Copy()
	c := session.Credentials
	cfg.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken))
	return cfg
}

// putControllerPolicy gives the role the controller's policy for the
// queue, and its KMS key when key is set, as joist_controller_iam_role does.
func putControllerPolicy(t *testing.T, ctx context.Context, role, queue, key string) {
	t.Helper()
	o := sim.Options()
	doc, err := policy.Render(policy.Params{Region: o.Region, AccountID: o.AccountID, ClusterName: o.ClusterName,
		NodeRoleARN: "arn:aws:iam::" + o.AccountID + ":role/" + testenv.NodeRole, QueueName: queue, QueueKMSKeyARN: key})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := iam.NewFromConfig(sim.AWSConfig()).PutRolePolicy(ctx, &iam.PutRolePolicyInput{
		RoleName: aws.String(role), PolicyName: aws.String("controller"), PolicyDocument: aws.String(doc.JSON())}); err != nil {
		t.Fatal(err)
	}
}

// With a role policy that lacks the queue's KMS key, every receive that
// would return a message fails: the controller counts each failure by its
// code, shows it on a gauge, and warns on the EC2NodeClasses; once the key
// is granted the next poll succeeds, the gauge clears and a recovery event
// follows.
func TestDeniedReceiveIsCountedAndToldOnNodeClasses(t *testing.T) {
	ctx := testContext(t)
	const name = "kms-denied"
	nc := testenv.NodeClass("interruption-kms", "demo", "al2023@latest")
	if err := kube.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), nc) })
	url := makeQueue(t, ctx, name)
	o := sim.Options()
	key := "arn:aws:kms:" + o.Region + ":" + o.AccountID + ":key/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
	admin := sqs.NewFromConfig(sim.AWSConfig())
	if _, err := admin.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url),
		Attributes: map[string]string{"KmsMasterKeyId": key, "SqsManagedSseEnabled": "false"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("{}")}); err != nil {
		t.Fatal(err)
	}

	const role = "interruption-kms-controller"
	c := interruption.NewController(interruption.Options{
		Kube: kube, SQS: sqs.NewFromConfig(controllerRole(t, ctx, role, name)), QueueName: name, Logger: logr.Discard(), Recorder: recorder(t),
	})
	denied := map[string]string{"code": "KMS.AccessDeniedException"}
	before := metric(t, "joist_interruption_receive_errors_total", denied)
	for i := 1; i <= 2; i++ {
		if err := c.Poll(ctx); err == nil || !strings.Contains(err.Error(), "KMS.AccessDeniedException") {
			t.Fatalf("poll %d without kms:Decrypt: %v, want KMS.AccessDeniedException", i, err)
		}
		if got := metric(t, "joist_interruption_receive_errors_total", denied) - before; got != float64(i) {
			t.Fatalf("after %d denied polls joist_interruption_receive_errors_total{code=KMS.AccessDeniedException} rose by %v", i, got)
		}
	}
	if got := metric(t, "joist_interruption_receive_failing", nil); got != 1 {
		t.Fatalf("joist_interruption_receive_failing = %v while receives fail, want 1", got)
	}
	note := waitEventAbout(t, ctx, nc.Name, corev1.EventTypeWarning, "InterruptionQueueReceiveFailed")
	if !strings.Contains(note, name) || !strings.Contains(note, "interruption_queue_kms_key_arn") {
		t.Errorf("warning %q does not name the queue and the fix", note)
	}

	putControllerPolicy(t, ctx, role, name, key)
	if err := c.Poll(ctx); err != nil {
		t.Fatalf("poll with kms:Decrypt on the key: %v", err)
	}
	if got := metric(t, "joist_interruption_receive_failing", nil); got != 0 {
		t.Fatalf("joist_interruption_receive_failing = %v after a receive succeeded, want 0", got)
	}
	waitEventAbout(t, ctx, nc.Name, corev1.EventTypeNormal, "InterruptionQueueReceiveRecovered")
	if visible, inFlight := queueDepth(t, ctx, url); visible+inFlight != 0 {
		t.Errorf("the message was not received and deleted: %d visible, %d in flight", visible, inFlight)
	}
}
