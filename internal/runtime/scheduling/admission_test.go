package scheduling_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// str prints l sorted by name, with readable quantities.
func str(l corev1.ResourceList) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(l)) {
		q := l[name]
		parts = append(parts, string(name)+"="+q.String())
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func container(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func limitRange(name string, items ...corev1.LimitRangeItem) *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.LimitRangeSpec{Limits: items}}
}

// TestAdmittedPodSpec checks the requests and limits a pod created from a
// template gets from the apiserver: pod defaulting (requests from limits)
// before LimitRanger admission (the namespace's Container defaults), as a
// DaemonSet's pods get them.
func TestAdmittedPodSpec(t *testing.T) {
	cases := []struct {
		name         string
		spec         corev1.PodSpec
		ranges       []*corev1.LimitRange
		want         []corev1.ResourceRequirements // containers, init containers after them
		wantRequests corev1.ResourceList           // PodRequests of the admitted pod
	}{
		{
			name:         "limits-only container requests its limits",
			spec:         corev1.PodSpec{Containers: []corev1.Container{container("c", nil, list("cpu", "500m", "memory", "1Gi"))}},
			want:         []corev1.ResourceRequirements{{Requests: list("cpu", "500m", "memory", "1Gi"), Limits: list("cpu", "500m", "memory", "1Gi")}},
			wantRequests: list("cpu", "500m", "memory", "1Gi"),
		},
		{
			name:         "a request that is set stays; a limit fills only the missing one",
			spec:         corev1.PodSpec{Containers: []corev1.Container{container("c", list("cpu", "100m"), list("cpu", "1", "memory", "2Gi"))}},
			want:         []corev1.ResourceRequirements{{Requests: list("cpu", "100m", "memory", "2Gi"), Limits: list("cpu", "1", "memory", "2Gi")}},
			wantRequests: list("cpu", "100m", "memory", "2Gi"),
		},
		{
			// Karpenter's e2e "LimitRange Default on daemonSet pods": the
			// request follows the default limit the LimitRange is stored with.
			name:         "LimitRange default limit also becomes the request",
			spec:         corev1.PodSpec{Containers: []corev1.Container{container("c", nil, list("memory", "1Gi"))}},
			ranges:       []*corev1.LimitRange{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: list("cpu", "2", "memory", "4Gi")})},
			want:         []corev1.ResourceRequirements{{Requests: list("cpu", "2", "memory", "1Gi"), Limits: list("cpu", "2", "memory", "1Gi")}},
			wantRequests: list("cpu", "2", "memory", "1Gi"),
		},
		{
			name:         "LimitRange default request fills a container without resources",
			spec:         corev1.PodSpec{Containers: []corev1.Container{container("c", nil, nil)}},
			ranges:       []*corev1.LimitRange{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, DefaultRequest: list("cpu", "2", "memory", "1Gi")})},
			want:         []corev1.ResourceRequirements{{Requests: list("cpu", "2", "memory", "1Gi"), Limits: corev1.ResourceList{}}},
			wantRequests: list("cpu", "2", "memory", "1Gi"),
		},
		{
			name:         "a container limit wins over the LimitRange default request",
			spec:         corev1.PodSpec{Containers: []corev1.Container{container("c", nil, list("cpu", "4"))}},
			ranges:       []*corev1.LimitRange{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, DefaultRequest: list("cpu", "1")})},
			want:         []corev1.ResourceRequirements{{Requests: list("cpu", "4"), Limits: list("cpu", "4")}},
			wantRequests: list("cpu", "4"),
		},
		{
			name: "max and min stand in for missing defaults; Pod items default nothing; the first LimitRange wins",
			spec: corev1.PodSpec{Containers: []corev1.Container{container("c", nil, nil)}},
			ranges: []*corev1.LimitRange{
				limitRange("a",
					corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: list("cpu", "64")},
					corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: list("memory", "2Gi"), Min: list("cpu", "250m")}),
				limitRange("b", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, DefaultRequest: list("cpu", "3", "memory", "3Gi", "ephemeral-storage", "1Gi")}),
			},
			want:         []corev1.ResourceRequirements{{Requests: list("cpu", "250m", "memory", "2Gi", "ephemeral-storage", "1Gi"), Limits: list("memory", "2Gi")}},
			wantRequests: list("cpu", "250m", "memory", "2Gi", "ephemeral-storage", "1Gi"),
		},
		{
			name: "a later Container item of one LimitRange overrides an earlier one",
			spec: corev1.PodSpec{Containers: []corev1.Container{container("c", nil, nil)}},
			ranges: []*corev1.LimitRange{limitRange("lr",
				corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, DefaultRequest: list("memory", "1Gi")},
				corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, DefaultRequest: list("memory", "3Gi")})},
			want:         []corev1.ResourceRequirements{{Requests: list("memory", "3Gi"), Limits: corev1.ResourceList{}}},
			wantRequests: list("memory", "3Gi"),
		},
		{
			name: "init containers are defaulted too",
			spec: corev1.PodSpec{
				Containers:     []corev1.Container{container("c", list("memory", "1Gi"), nil)},
				InitContainers: []corev1.Container{container("init", nil, list("memory", "4Gi"))},
			},
			want: []corev1.ResourceRequirements{
				{Requests: list("memory", "1Gi")},
				{Requests: list("memory", "4Gi"), Limits: list("memory", "4Gi")},
			},
			wantRequests: list("memory", "4Gi"),
		},
		{
			name: "pod-level limits become pod-level requests",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{container("c", list("cpu", "100m"), nil)},
				Resources:  &corev1.ResourceRequirements{Limits: list("cpu", "2", "memory", "3Gi")},
			},
			want:         []corev1.ResourceRequirements{{Requests: list("cpu", "100m")}},
			wantRequests: list("cpu", "2", "memory", "3Gi"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.spec.DeepCopy()
			got := AdmittedPodSpec(tc.spec, tc.ranges)
			if !equality.Semantic.DeepEqual(&tc.spec, before) {
				t.Fatalf("the template was modified: %+v", tc.spec)
			}
			all := append(append([]corev1.Container(nil), got.Containers...), got.InitContainers...)
			if len(all) != len(tc.want) {
				t.Fatalf("%d containers, want %d", len(all), len(tc.want))
			}
			for i, c := range all {
				if !equality.Semantic.DeepEqual(c.Resources, tc.want[i]) {
					t.Errorf("container %s: requests %s limits %s, want requests %s limits %s",
						c.Name, str(c.Resources.Requests), str(c.Resources.Limits), str(tc.want[i].Requests), str(tc.want[i].Limits))
				}
			}
			req := PodRequests(&corev1.Pod{Spec: got})
			if !equality.Semantic.DeepEqual(req, tc.wantRequests) {
				t.Errorf("pod requests %s, want %s", str(req), str(tc.wantRequests))
			}
		})
	}
}
