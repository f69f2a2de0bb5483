package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption"
)

// TestReleases: AMI releases whose instances never register, in a world of
// its own beside TestShared. Each release drifts every node of the world's
// node class, so its scenarios run one after another.
func TestReleases(t *testing.T) {
	t.Parallel()
	ownWorld(t, worldOptions{name: "releases"})
	nodeClass(t, "default")
	t.Run("broken-ami", testBrokenAMIRollout)
	t.Run("broken-ami-no-policy", testBrokenAMIWithoutPolicy)
}

// testBrokenAMIRollout: a pool rolls drift out as canary=1,bake=30s in
// waves of its 50% budget, with a breaker that opens at the first failed
// replacement. A release whose instances never register launches at most
// the canary's replacement; when that replacement is given up (the command
// timeout) the rollout stops and the breaker opens (DisruptionHalted, a
// Warning event); no node is drained and every pod keeps running
// throughout. The next, good release closes the breaker and rolls out to
// every node, never more than a wave (2) disrupting at once.
func testBrokenAMIRollout(t *testing.T) {
	const pool, replicas = "release", 4
	wd := worldOf(t)
	ns := scenarioNamespace(t, "e2e-release")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) {
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "50%"}}
		np.Annotations = map[string]string{v1.DriftRolloutAnnotationKey: "canary=1,bake=30s", v1.DisruptionBreakerAnnotationKey: "1/1h"}
	})
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	create(t, deployment(ns, "pause", replicas, spec))
	waitRunning(t, ns, replicas)
	// No pod may become unavailable while the release is broken.
	inv := watchInvariants(t, ns, "pause", replicas, 0, pool)
	old := claimNames(t, pool)
	claims := watchClaims(t, pool)
	taints := watchDisruptedTaints(t, pool)
	worst := worstDisrupting(t, pool)

	broken, err := wd.sim.PublishBrokenAMI("al2023", "x86_64", "standard")
	if err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	t.Logf("published %s, whose instances never register", broken.ImageID)
	// The canary's replacement launches and never registers; its command
	// gives it up at the command timeout.
	waitLong(t, "DisruptionHalted on the pool", disruption.MinCommandTimeout+waitTimeout, func() (bool, string) {
		if created, _ := claims.names(); len(created) > 1 {
			t.Fatalf("%d replacements launched under a release whose instances never register (%v); the canary is 1", len(created), created)
		}
		c := poolCondition(t, pool, v1.ConditionTypeDisruptionHalted)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1.DisruptionHaltedReasonNodePool, fmt.Sprintf("%+v", c)
	})
	halted := time.Since(released)
	for _, reason := range []string{"DisruptionHalted", "DriftRolloutStopped"} {
		eventually(t, "a "+reason+" warning on the pool", func() (bool, string) {
			for _, e := range runtimeEvents(t, "default", pool, reason) {
				if e.Type == corev1.EventTypeWarning {
					return true, ""
				}
			}
			return false, "no event yet"
		})
	}
	created, _ := claims.names()
	launched := launchedFrom(t, pool, broken.ImageID)
	tainted := taints.counts()
	t.Logf("broken release: %d replacements created %v, %d instances launched from it, nodes tainted %v, at most %d disrupting at once; breaker open %s after the release",
		len(created), created, len(launched), tainted, worst(), halted.Round(time.Second))
	if len(created) != 1 || len(launched) != 1 {
		t.Errorf("%d replacements and %d instances of %s; want the canary's one", len(created), len(launched), broken.ImageID)
	}
	if len(tainted) > 1 || worst() > 1 {
		t.Errorf("nodes tainted for disruption %v, at most %d at once; the canary is 1", tainted, worst())
	}
	if drained := missing(old, claimNames(t, pool)); len(drained) > 0 {
		t.Errorf("old nodeclaims %v are gone or being deleted though no replacement registered", drained)
	}
	inv.check(t)

	good, err := wd.sim.PublishAMI("al2023", "x86_64", "standard")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("published %s, a good release", good.ImageID)
	worst = worstDisrupting(t, pool)
	eventually(t, "DisruptionHalted False after the good release", func() (bool, string) {
		c := poolCondition(t, pool, v1.ConditionTypeDisruptionHalted)
		return c != nil && c.Status == metav1.ConditionFalse, fmt.Sprintf("%+v", c)
	})
	waitLong(t, "every node on the good release", 3*waitTimeout, func() (bool, string) {
		on, left := 0, len(old)-len(missing(old, claimNames(t, pool)))
		for _, c := range claimsOf(t, pool) {
			if c.Status.ImageID == good.ImageID && meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeInitialized) {
				on++
			}
		}
		return left == 0 && on == replicas, fmt.Sprintf("%d old nodeclaims left, %d initialized on %s", left, on, good.ImageID)
	})
	waitRunning(t, ns, replicas)
	if worst() > 2 {
		t.Errorf("%d nodes disrupting at once; waves are the 50%% budget of 4 nodes, 2", worst())
	}
	t.Logf("good release rolled out %s after it was published", time.Since(released.Add(halted)).Round(time.Second))
}

// testBrokenAMIWithoutPolicy measures what the same broken release costs a
// pool that behaves as under Karpenter: no rollout policy, the default
// drift budget (10%), and breakers that never open. It prints the launch
// attempts, the nodes drained and the pods not running over a window
// (JOIST_E2E_RELEASE_COST, e.g. 25m; outside make test). A given-up
// replacement is left as in-flight capacity, which holds the pool's drift
// until the 15-minute registration timeout deletes it, so a window shorter
// than that sees one attempt per budgeted node.
func testBrokenAMIWithoutPolicy(t *testing.T) {
	window, err := time.ParseDuration(os.Getenv("JOIST_E2E_RELEASE_COST"))
	if err != nil {
		t.Skip("set JOIST_E2E_RELEASE_COST to a window (25m) to measure a broken release without a rollout policy")
	}
	const pool, replicas = "release-no-policy", 10
	wd := worldOf(t)
	ns := scenarioNamespace(t, "e2e-release-no-policy")
	never := "1000/1m" // the most failures a breaker takes: it never opens
	setClusterBreaker(t, never)
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) {
		np.Spec.Disruption.Budgets = nil
		np.Annotations = map[string]string{v1.DisruptionBreakerAnnotationKey: never}
	})
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	create(t, deployment(ns, "pause", replicas, spec))
	waitRunning(t, ns, replicas)
	old := claimNames(t, pool)
	claims := watchClaims(t, pool)
	taints := watchDisruptedTaints(t, pool)
	worst := worstDisrupting(t, pool)
	var mu sync.Mutex
	fewest := replicas
	stopPods := observe(time.Second, func() {
		n, _ := running(pods(t, ns, map[string]string{"app": "pause"}))
		mu.Lock()
		fewest = min(fewest, n)
		mu.Unlock()
	})
	defer stopPods()

	broken, err := wd.sim.PublishBrokenAMI("al2023", "x86_64", "standard")
	if err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	firstFailed := time.Duration(-1) // none within the window
	for time.Since(released) < window {
		if firstFailed < 0 {
			if _, deleted := claims.names(); len(deleted) > 0 {
				firstFailed = time.Since(released)
			}
		}
		time.Sleep(5 * time.Second)
	}
	created, deleted := claims.names()
	drained := len(missing(old, claimNames(t, pool)))
	mu.Lock()
	defer mu.Unlock()
	t.Logf("no rollout policy, %d nodes, a release whose instances never register, over %s: %d replacements created, %d instances launched from it, "+
		"%d given up, %d old nodes drained, %d distinct nodes tainted for disruption (at most %d at once), at least %d/%d pods running; first replacement deleted %s after the release (-1s: none); drift goes on until the release is withdrawn",
		len(old), window, len(created), len(launchedFrom(t, pool, broken.ImageID)), len(deleted)-drained, drained, len(taints.counts()), worst(), fewest, replicas, firstFailed.Round(time.Second))
	if len(created) < 2 {
		t.Errorf("%d replacements over %s: the scenario did not see drift retry the broken release", len(created), window)
	}
}

// missing are the names of want not in have.
func missing(want, have []string) []string {
	var out []string
	for _, name := range want {
		if !slices.Contains(have, name) {
			out = append(out, name)
		}
	}
	return out
}

// worstDisrupting follows how many of the pool's nodes are disrupting at
// once, from now until the test ends.
func worstDisrupting(t *testing.T, pool string) func() int {
	var mu sync.Mutex
	worst := 0
	t.Cleanup(observe(200*time.Millisecond, func() {
		n := disrupting(t, pool)
		mu.Lock()
		worst = max(worst, n)
		mu.Unlock()
	}))
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return worst
	}
}

// launchedFrom are the pool's instances, in any state, launched from the image.
func launchedFrom(t *testing.T, pool, imageID string) []string {
	t.Helper()
	var out []string
	pager := ec2.NewDescribeInstancesPaginator(ec2.NewFromConfig(worldOf(t).sim.AWSConfig()), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + v1.NodePoolLabelKey), Values: []string{pool}},
		{Name: aws.String("image-id"), Values: []string{imageID}},
	}})
	for pager.HasMorePages() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				out = append(out, aws.ToString(i.InstanceId))
			}
		}
	}
	return out
}
