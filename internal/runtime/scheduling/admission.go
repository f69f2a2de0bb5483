package scheduling

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// AdmittedPodSpec is spec as the apiserver stores a pod created from it in
// a namespace holding limitRanges (in the order they apply): pod defaulting
// first sets each container's missing requests to its limits, and pod-level
// requests to pod-level limits; then LimitRanger admission fills what is
// still missing from the namespace's Container defaults. A workload's
// template passes neither step, so a pod the solver derives from one (a
// DaemonSet's) would otherwise ask for less than the pod that will run.
// spec itself is not modified.
func AdmittedPodSpec(spec corev1.PodSpec, limitRanges []*corev1.LimitRange) corev1.PodSpec {
	if spec.Resources != nil {
		spec.Resources = admittedPodResources(spec)
	}
	defReq, defLim := containerDefaults(limitRanges)
	spec.InitContainers = admittedContainers(spec.InitContainers, defReq, defLim)
	spec.Containers = admittedContainers(spec.Containers, defReq, defLim)
	return spec
}

// containerDefaults are the default requests and limits LimitRanger gives a
// container: each LimitRange in turn fills only what earlier ones left
// unset; within one, a later Container item overrides an earlier one.
func containerDefaults(limitRanges []*corev1.LimitRange) (requests, limits corev1.ResourceList) {
	requests, limits = corev1.ResourceList{}, corev1.ResourceList{}
	for _, lr := range limitRanges {
		req, lim := corev1.ResourceList{}, corev1.ResourceList{}
		for i := range lr.Spec.Limits {
			item := &lr.Spec.Limits[i]
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			itemReq, itemLim := itemDefaults(item)
			for k, v := range itemReq {
				req[k] = v
			}
			for k, v := range itemLim {
				lim[k] = v
			}
		}
		fillMissing(requests, req)
		fillMissing(limits, lim)
	}
	return requests, limits
}

// itemDefaults are a Container item's default request and limit after the
// apiserver's LimitRange defaulting: the limit defaults to max, the request
// to the limit, else to min. Stored objects already carry them; applying
// them again changes nothing.
func itemDefaults(item *corev1.LimitRangeItem) (requests, limits corev1.ResourceList) {
	limits = fillMissing(corev1.ResourceList{}, item.Default)
	fillMissing(limits, item.Max)
	requests = fillMissing(corev1.ResourceList{}, item.DefaultRequest)
	fillMissing(requests, limits)
	fillMissing(requests, item.Min)
	return requests, limits
}

// fillMissing copies into dst the entries of src it lacks, and returns dst.
func fillMissing(dst, src corev1.ResourceList) corev1.ResourceList {
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v.DeepCopy()
		}
	}
	return dst
}

// admittedContainers is cs with requests defaulted to limits, then the
// LimitRange defaults filled in; containers needing neither are shared.
func admittedContainers(cs []corev1.Container, defReq, defLim corev1.ResourceList) []corev1.Container {
	var out []corev1.Container
	for i := range cs {
		r := &cs[i].Resources
		if !lacksAny(r.Requests, r.Limits) && !lacksAny(r.Requests, defReq) && !lacksAny(r.Limits, defLim) {
			continue
		}
		if out == nil {
			out = append([]corev1.Container(nil), cs...)
		}
		res := r.DeepCopy()
		if res.Requests == nil {
			res.Requests = corev1.ResourceList{}
		}
		if res.Limits == nil {
			res.Limits = corev1.ResourceList{}
		}
		fillMissing(res.Requests, r.Limits)
		fillMissing(res.Limits, defLim)
		fillMissing(res.Requests, defReq)
		out[i].Resources = *res
	}
	if out == nil {
		return cs
	}
	return out
}

// lacksAny reports whether have misses a name that want has.
func lacksAny(have, want corev1.ResourceList) bool {
	for k := range want {
		if _, ok := have[k]; !ok {
			return true
		}
	}
	return false
}

// admittedPodResources defaults the pod-level requests the apiserver
// defaults: a cpu, memory or hugepages limit without a request asks for the
// limit, except hugepages that containers request (a container limit is a
// request by then), which the apiserver sets to the containers' total:
// PodRequests counts that total when no pod-level request is set, so those
// stay unset.
func admittedPodResources(spec corev1.PodSpec) *corev1.ResourceRequirements {
	r := spec.Resources
	out := r.DeepCopy()
	for k, lim := range r.Limits {
		if _, ok := r.Requests[k]; ok {
			continue
		}
		huge := strings.HasPrefix(string(k), corev1.ResourceHugePagesPrefix)
		if k != corev1.ResourceCPU && k != corev1.ResourceMemory && !huge {
			continue
		}
		if huge && containersRequest(spec, k) {
			continue
		}
		if out.Requests == nil {
			out.Requests = corev1.ResourceList{}
		}
		out.Requests[k] = lim.DeepCopy()
	}
	return out
}

func containersRequest(spec corev1.PodSpec, name corev1.ResourceName) bool {
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			_, req := cs[i].Resources.Requests[name]
			_, lim := cs[i].Resources.Limits[name]
			if req || lim {
				return true
			}
		}
	}
	return false
}
