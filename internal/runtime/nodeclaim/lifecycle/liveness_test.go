package lifecycle

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kevents "k8s.io/client-go/tools/events"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
)

// A claim given up after the registration timeout is reported as a
// RegistrationFailed warning on the claim and on its NodePool, each naming
// the instance; without the NodePool, on the claim alone.
func TestRegistrationTimeoutIsAnnounced(t *testing.T) {
	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "boot-abc", UID: "uid-1", Labels: map[string]string{v1.NodePoolLabelKey: "boot"}},
		Status:     v1.NodeClaimStatus{ProviderID: "aws:///us-west-2a/i-0123456789abcdef0"},
	}
	pool := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "boot", UID: "uid-pool"}}
	for _, tc := range []struct {
		name string
		pool *v1.NodePool
		want int
	}{{"with its nodepool", pool, 2}, {"nodepool gone", nil, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			fake := kevents.NewFakeRecorder(10)
			announceRegistrationFailed(events.NewRecorder(fake), claim, tc.pool)
			var got []string
			for len(fake.Events) > 0 {
				got = append(got, <-fake.Events)
			}
			if len(got) != tc.want {
				t.Fatalf("events %q; want %d", got, tc.want)
			}
			for _, e := range got {
				if !strings.HasPrefix(e, "Warning "+events.RegistrationFailed+" Failed to register node: ") || !strings.Contains(e, "i-0123456789abcdef0") || !strings.Contains(e, RegistrationTimeout.String()) {
					t.Errorf("event %q: want a RegistrationFailed warning naming the instance and the timeout", e)
				}
			}
			if tc.pool != nil && !strings.Contains(got[1], "NodeClaim boot-abc") {
				t.Errorf("the nodepool's event %q does not name the nodeclaim", got[1])
			}
		})
	}
}
