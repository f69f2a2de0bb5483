package scheduling

import (
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodRequests returns the resources the scheduler reserves for pod, with the
// upstream semantics: the sum of regular containers plus restartable
// (sidecar) init containers, or the largest regular init container together
// with the sidecars started before it if that is larger; pod-level resources
// replace the container sum for the resources they set; in-place resizes
// count at max(spec, allocated); pod overhead is added. Limits are ignored.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	if len(pod.Spec.Containers) == 1 && len(pod.Spec.InitContainers) == 0 && len(pod.Status.ContainerStatuses) == 0 &&
		pod.Spec.Resources == nil && len(pod.Spec.Overhead) == 0 {
		// The common case, without the arithmetic: a copy of the one
		// container's requests.
		req := pod.Spec.Containers[0].Resources.Requests
		out := make(corev1.ResourceList, len(req))
		for name, q := range req {
			out[name] = q.DeepCopy()
		}
		return out
	}
	out := corev1.ResourceList{}
	var allocated map[string]corev1.ResourceList
	for _, st := range pod.Status.ContainerStatuses {
		if st.AllocatedResources != nil {
			if allocated == nil {
				allocated = map[string]corev1.ResourceList{}
			}
			allocated[st.Name] = st.AllocatedResources
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if a, ok := allocated[c.Name]; ok {
			AddResources(out, MaxResources(c.Resources.Requests, a))
		} else {
			AddResources(out, c.Resources.Requests)
		}
	}
	if len(pod.Spec.InitContainers) > 0 {
		sidecars := corev1.ResourceList{}
		initPeak := corev1.ResourceList{}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				AddResources(sidecars, c.Resources.Requests)
				initPeak = MaxResources(initPeak, sidecars)
				continue
			}
			step := sidecars.DeepCopy()
			AddResources(step, c.Resources.Requests)
			initPeak = MaxResources(initPeak, step)
		}
		AddResources(out, sidecars)
		out = MaxResources(out, initPeak)
	}
	if pod.Spec.Resources != nil {
		for name, q := range pod.Spec.Resources.Requests {
			out[name] = q.DeepCopy()
		}
	}
	AddResources(out, pod.Spec.Overhead)
	return out
}

// SumRequests is the sum of PodRequests over pods.
func SumRequests(pods []*corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, p := range pods {
		AddResources(out, PodRequests(p))
	}
	return out
}

// AddResources adds src into dst, resource by resource.
func AddResources(dst, src corev1.ResourceList) {
	for name, q := range src {
		cur := dst[name]
		cur.Add(q)
		dst[name] = cur
	}
}

// MaxResources is the per-resource maximum of a and b, a new list.
func MaxResources(a, b corev1.ResourceList) corev1.ResourceList {
	out := a.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range b {
		if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// resources indexes resource names into dense vectors so fit checks are a
// loop over a few int64s. cpu is in millicores, everything else in units.
type resources struct {
	names []corev1.ResourceName
	index map[corev1.ResourceName]int
}

const (
	resCPU = iota
	resMemory
	resPods
	resEphemeral
	resFixed
)

func newResources() *resources {
	r := &resources{index: map[corev1.ResourceName]int{}}
	for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
		r.add(n)
	}
	return r
}

func (r *resources) add(name corev1.ResourceName) int {
	if i, ok := r.index[name]; ok {
		return i
	}
	r.index[name] = len(r.names)
	r.names = append(r.names, name)
	return len(r.names) - 1
}

func (r *resources) addAll(l corev1.ResourceList) {
	for name := range l {
		r.add(name)
	}
}

// addAllSorted adds l's names in name order, so a catalog's resources come
// out the same whatever the map order.
func (r *resources) addAllSorted(l corev1.ResourceList) {
	names := make([]string, 0, len(l))
	for name := range l {
		if _, ok := r.index[name]; !ok {
			names = append(names, string(name))
		}
	}
	sort.Strings(names)
	for _, name := range names {
		r.add(corev1.ResourceName(name))
	}
}

// vec converts l; unknown names must have been added first.
func (r *resources) vec(l corev1.ResourceList) []int64 {
	v := make([]int64, len(r.names))
	for name, q := range l {
		i, ok := r.index[name]
		if !ok {
			continue
		}
		v[i] = quantityValue(i, q)
	}
	return v
}

// allocatable is vec for an allocatable list; a missing pod count means
// the pod count is not limited.
func (r *resources) allocatable(l corev1.ResourceList) []int64 {
	v := r.vec(l)
	if _, ok := l[corev1.ResourcePods]; !ok {
		v[resPods] = math.MaxInt32
	}
	return v
}

func quantityValue(i int, q resource.Quantity) int64 {
	if i == resCPU {
		return q.MilliValue()
	}
	return q.Value()
}

func (r *resources) list(v []int64) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i, x := range v {
		if x == 0 {
			continue
		}
		if i == resCPU {
			out[r.names[i]] = *resource.NewMilliQuantity(x, resource.DecimalSI)
		} else if i == resMemory || i == resEphemeral {
			out[r.names[i]] = *resource.NewQuantity(x, resource.BinarySI)
		} else {
			out[r.names[i]] = *resource.NewQuantity(x, resource.DecimalSI)
		}
	}
	return out
}

// fitCount is how many items of size req fit into free (MaxInt when req is
// all zero); negative free counts as zero.
func fitCount(free, req []int64) int {
	n := int(^uint(0) >> 1)
	for i, q := range req {
		if q <= 0 {
			continue
		}
		f := free[i]
		if f < q {
			return 0
		}
		if k := int(f / q); k < n {
			n = k
		}
	}
	return n
}

// fitUpTo is min(fitCount(free, req), k), skipping the divisions when all k
// fit, as they mostly do when k is small.
func fitUpTo(free, req []int64, k int) int {
	if k <= 0 {
		return 0
	}
	for i, q := range req {
		if q > 0 && free[i] < int64(k)*q {
			return min(fitCount(free, req), k)
		}
	}
	return k
}

// fitsOne reports whether one pod of req fits in free: fitCount(free, req)
// >= 1 without the divisions.
func fitsOne(free, req []int64) bool {
	for i, q := range req {
		if q > 0 && free[i] < q {
			return false
		}
	}
	return true
}

// fitsIn reports used+add <= capacity in every dimension.
func fitsIn(used, add, capacity []int64) bool {
	for i := range used {
		if used[i]+add[i] > capacity[i] {
			return false
		}
	}
	return true
}
