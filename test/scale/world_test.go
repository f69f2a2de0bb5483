package scale

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	cloudaws "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
	"github.com/joistdev/terraform-provider-joist/test/e2e"
)

const clusterName = "joist-scale"

type world struct {
	sb    *sandbox.Sandbox
	kube  client.Client
	cs    kubernetes.Interface
	cloud *cloudaws.Provider
	// pid is a controller process the world started itself (make compare's
	// Karpenter); 0 follows the sandbox's joist controller.
	pid int
	// costOnly leaves the LP and fresh-plan ratios out of the rows: working
	// them out calls AWS beside the controller.
	costOnly bool
	// callsBy counts only the AWS calls signed with this access key (the
	// controller's); "" counts every call.
	callsBy string
}

// startWorld brings up the sandbox with awssim and deploys the controller
// the way joist_controller does; the sandbox runs it as the Deployment's pod.
// With interruptionQueue the controller consumes a queue named for the
// cluster, fed by EventBridge rules as joist_interruption_queue creates them.
// extra settings are added to the controller's.
func startWorld(ctx context.Context, progress io.Writer, interruptionQueue bool, extra map[string]string) (*world, error) {
	bin, err := sandbox.FindBinDir()
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.Start(ctx, sandbox.Options{
		BinDir: bin, Dir: os.Getenv("JOIST_SCALE_DIR"), Progress: progress, RunControllers: true, SystemNodes: 2,
		NodeLeaseSeconds: nodeLeaseSeconds,
		AWS:              &awssim.Options{ClusterName: clusterName, DefaultPoolCapacity: 100000},
	})
	if err != nil {
		return nil, err
	}
	w := &world{sb: sb, cs: kubernetes.NewForConfigOrDie(sb.Config)}
	scheme, err := operator.Scheme()
	if err != nil {
		return w, err
	}
	if w.kube, err = client.New(sb.Config, client.Options{Scheme: scheme}); err != nil {
		return w, err
	}
	if _, err := createNodeRole(ctx, sb, nodeRole); err != nil {
		return w, err
	}
	settings := map[string]string{"CLUSTER_NAME": clusterName, "LOG_LEVEL": "info", "ENABLE_PROFILING": "true"}
	for k, v := range extra {
		settings[k] = v
	}
	if interruptionQueue {
		if err := createInterruptionQueue(ctx, sb, true); err != nil {
			return w, err
		}
		settings["INTERRUPTION_QUEUE"] = clusterName
	}
	return w, w.deployController(ctx, settings)
}

const nodeRole = "JoistNodeRole-" + clusterName

// nodeLeaseSeconds is the node lease kwok keeps in these worlds: 160 s,
// renewed every 40 s. With a kubelet's 40 s lease, kwok on a 2-core
// machine could not renew 1,300 leases every 10 s beside the rest of a
// 10,000-pod run, and about 750 Nodes that were up were NotReady at a time.
const nodeLeaseSeconds = 160

func (w *world) deployController(ctx context.Context, settings map[string]string) error {
	return w.sb.DeployController(ctx, controllerdeploy.Spec{
		Image:    "ghcr.io/joistdev/" + sandbox.ControllerImage + ":dev",
		Replicas: 1,
		Settings: settings,
	})
}

// leakedCapacity waits up to timeout for the no-leaked-capacity invariant
// (e2e.LeakedCapacity) to hold over the whole cluster, and returns what
// still breaks it when the time is up.
func (w *world) leakedCapacity(ctx context.Context, timeout time.Duration) []string {
	ec2c := ec2.NewFromConfig(w.sb.AWS.AWSConfig())
	deadline := time.Now().Add(timeout)
	for {
		problems, err := e2e.LeakedCapacity(ctx, w.kube, ec2c, clusterName, "")
		if err != nil {
			problems = []string{err.Error()}
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			return problems
		}
		time.Sleep(2 * time.Second)
	}
}

func (w *world) stop() {
	if w.sb != nil {
		_ = w.sb.Stop()
	}
}

func (w *world) controllerPID() int {
	if w.pid != 0 {
		return w.pid
	}
	if c := w.sb.Controllers(); len(c) > 0 {
		return c[0].PID
	}
	return 0
}

// nodeClass is the EC2NodeClass every scenario's pools use.
func nodeClass(name string) *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: awsv1.EC2NodeClassSpec{
			Role:                       nodeRole,
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": clusterName}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": clusterName}}},
		},
	}
}

// nodePool is a general-purpose spot-and-on-demand pool over c/m/r.
func nodePool(name, class string, budget string, consolidateAfter time.Duration) *v1.NodePool {
	weight := int32(10)
	return &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{
			Weight: &weight,
			Template: v1.NodeClaimTemplate{
				ObjectMeta: v1.ObjectMeta{Labels: map[string]string{"scale/pool": name}},
				Spec: v1.NodeClaimTemplateSpec{
					NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: class},
					ExpireAfter:  v1.NewNillableDuration(v1.DefaultExpireAfter),
					Requirements: []v1.NodeSelectorRequirementWithMinValues{
						{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"spot", "on-demand"}},
						{Key: v1.LabelInstanceCategory, Operator: corev1.NodeSelectorOpIn, Values: []string{"c", "m", "r"}},
						{Key: v1.LabelInstanceGeneration, Operator: corev1.NodeSelectorOpGt, Values: []string{"2"}},
						{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
						// Node sizes of a typical general-purpose pool; it also
						// gives consolidation something to pack.
						{Key: v1.LabelInstanceCPU, Operator: v1.NodeSelectorOpLte, Values: []string{"16"}},
					},
				},
			},
			Disruption: v1.Disruption{
				ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized,
				ConsolidateAfter:    v1.NewNillableDuration(consolidateAfter),
				Budgets:             []v1.Budget{{Nodes: budget}},
			},
		},
	}
}

func requests(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
}

func progressWriter() io.Writer {
	if os.Getenv("JOIST_SCALE_VERBOSE") != "" {
		return os.Stderr
	}
	return io.Discard
}
