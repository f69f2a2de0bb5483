package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// testDisruptionControls: Joist's disruption controls hold drift while set
// and let it go when unset: observe-only drift, the pool's pause and the
// cluster-wide pause (the joist-disruption ConfigMap joist_controller
// writes), each without a controller restart. Serial: the cluster pause
// holds every pool.
func testDisruptionControls(t *testing.T) {
	const pool = "controls"
	ns := scenarioNamespace(t, "e2e-controls")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) { np.Spec.Disruption.Budgets = nil })
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	create(t, deployment(ns, "pause", 2, spec))
	waitRunning(t, ns, 2)

	for i, tc := range []struct {
		name      string
		hold      func(on bool)
		condition string // the DisruptionPaused reason while held; "" none
		blocked   string // what the DisruptionBlocked event says
	}{
		{"observe", func(on bool) { annotatePool(t, pool, v1.DriftModeAnnotationKey, on, "observe") }, "", "drift mode is observe"},
		{"pool-pause", func(on bool) { annotatePool(t, pool, v1.DisruptionPausedAnnotationKey, on, "true") }, v1.DisruptionPausedReasonNodePool, "paused"},
		{"cluster-pause", func(on bool) { setClusterPause(t, on) }, v1.DisruptionPausedReasonCluster, "paused for the whole cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.hold(true)
			held := claimNames(t, pool)
			driftPool(t, pool, fmt.Sprint(i))
			eventually(t, "every nodeclaim Drifted", func() (bool, string) {
				n := 0
				for _, c := range claimsOf(t, pool) {
					if meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeDrifted) {
						n++
					}
				}
				return n == len(held), fmt.Sprintf("%d/%d drifted", n, len(held))
			})
			for _, name := range held {
				eventually(t, "DisruptionBlocked on "+name, func() (bool, string) {
					for _, e := range runtimeEvents(t, "default", name, "DisruptionBlocked") {
						if strings.Contains(e.Note, tc.blocked) {
							return true, ""
						}
					}
					return false, "no event naming the hold yet"
				})
			}
			if tc.condition != "" {
				eventually(t, "DisruptionPaused "+tc.condition, func() (bool, string) {
					c := poolCondition(t, pool, v1.ConditionTypeDisruptionPaused)
					return c != nil && c.Status == metav1.ConditionTrue && c.Reason == tc.condition, fmt.Sprintf("%+v", c)
				})
			}
			// Three more disruption passes go by: still nothing replaced.
			time.Sleep(30 * time.Second)
			if got := claimNames(t, pool); strings.Join(got, ",") != strings.Join(held, ",") {
				t.Fatalf("while held, nodeclaims changed from %v to %v", held, got)
			}

			tc.hold(false)
			eventually(t, "every drifted nodeclaim replaced", func() (bool, string) {
				claims := claimsOf(t, pool)
				for _, c := range claims {
					if strings.Contains(","+strings.Join(held, ",")+",", ","+c.Name+",") {
						return false, c.Name + " is still there"
					}
					if !meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeInitialized) {
						return false, c.Name + " not initialized"
					}
				}
				return len(claims) == len(held), fmt.Sprintf("%d nodeclaims", len(claims))
			})
			waitRunning(t, ns, 2)
			if c := poolCondition(t, pool, v1.ConditionTypeDisruptionPaused); tc.condition != "" && (c == nil || c.Status != metav1.ConditionFalse) {
				t.Errorf("DisruptionPaused after the hold ended: %+v, want False", c)
			}
		})
	}
}

// annotatePool sets (on) or removes the pool's annotation key.
func annotatePool(t *testing.T, name, key string, on bool, value string) {
	t.Helper()
	np := &v1.NodePool{}
	if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, np); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(np.DeepCopy())
	if on {
		metav1.SetMetaDataAnnotation(&np.ObjectMeta, key, value)
	} else {
		delete(np.Annotations, key)
	}
	if err := worldOf(t).kube.Patch(context.Background(), np, patch); err != nil {
		t.Fatal(err)
	}
}

// driftPool changes the pool's template labels: every nodeclaim drifts.
func driftPool(t *testing.T, name, rev string) {
	t.Helper()
	np := &v1.NodePool{}
	if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, np); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(np.DeepCopy())
	np.Spec.Template.Labels = map[string]string{"e2e.joist.dev/rev": rev}
	if err := worldOf(t).kube.Patch(context.Background(), np, patch); err != nil {
		t.Fatal(err)
	}
}

// setClusterPause writes the cluster-wide pause as joist_controller does.
func setClusterPause(t *testing.T, on bool) {
	t.Helper()
	setClusterDisruption(t, v1.DisruptionSettingsPausedKey, fmt.Sprint(on))
}

// setClusterBreaker writes the cluster breaker's policy as joist_controller
// does.
func setClusterBreaker(t *testing.T, policy string) {
	t.Helper()
	setClusterDisruption(t, v1.DisruptionSettingsBreakerKey, policy)
}

// setClusterDisruption sets a key of the controller's cluster-wide
// disruption settings.
func setClusterDisruption(t *testing.T, key, value string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	ref := client.ObjectKey{Namespace: "kube-system", Name: v1.DisruptionSettingsConfigMap}
	if err := worldOf(t).kube.Get(context.Background(), ref, cm); err != nil {
		t.Fatalf("the controller's %s: %v", ref, err)
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[key] = value
	if err := worldOf(t).kube.Patch(context.Background(), cm, patch); err != nil {
		t.Fatal(err)
	}
}

func poolCondition(t *testing.T, name, typ string) *metav1.Condition {
	t.Helper()
	np := &v1.NodePool{}
	if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, np); err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(np.Status.Conditions, typ)
}
