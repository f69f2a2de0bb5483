package volumetopology

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// BindCompletedAnnotation is set by the PersistentVolume controller once it
// has bound a claim; kube-scheduler treats a claim that names a volume but
// lacks it as not bound yet, and so does this package.
const BindCompletedAnnotation = "pv.kubernetes.io/bind-completed"

// maxAlternatives bounds the combinations of several volumes' alternatives
// (their product grows fast); the first combinations are the preferred ones
// and are kept.
const maxAlternatives = 16

// Objects are the claims, volumes and storage classes the pods of a pass
// refer to. A missing or nil entry means the object does not exist.
type Objects struct {
	Claims         map[types.NamespacedName]*corev1.PersistentVolumeClaim
	Volumes        map[string]*corev1.PersistentVolume
	StorageClasses map[string]*storagev1.StorageClass
}

// NewObjects returns empty Objects ready to fill.
func NewObjects() Objects {
	return Objects{
		Claims:         map[types.NamespacedName]*corev1.PersistentVolumeClaim{},
		Volumes:        map[string]*corev1.PersistentVolume{},
		StorageClasses: map[string]*storagev1.StorageClass{},
	}
}

// ClaimRef is the claim behind one of a pod's volumes.
type ClaimRef struct {
	Key types.NamespacedName
	// Volume is the pod's volume name, for messages.
	Volume string
	// Ephemeral claims are generated for the pod from a template.
	Ephemeral bool
}

// Claims lists the claims a pod's volumes use, once each: persistentVolume-
// Claim sources by name, generic ephemeral volumes by the name Kubernetes
// generates for them (<pod>-<volume>). Ephemeral volumes of a pod already
// bound to a node are skipped: that claim goes away with the pod, and the
// pod's replacement gets a new one wherever it lands.
func Claims(pod *corev1.Pod) []ClaimRef {
	var out []ClaimRef
	seen := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		ref := ClaimRef{Volume: v.Name, Key: types.NamespacedName{Namespace: pod.Namespace}}
		switch {
		case v.PersistentVolumeClaim != nil:
			ref.Key.Name = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil && pod.Spec.NodeName == "":
			ref.Key.Name, ref.Ephemeral = pod.Name+"-"+v.Name, true
		default:
			continue
		}
		if !seen[ref.Key.Name] {
			seen[ref.Key.Name] = true
			out = append(out, ref)
		}
	}
	return out
}

// ForPod returns the alternative requirement sets the pod's volumes allow,
// most preferred first; nil when they do not restrict the node. The error
// says why the pod cannot be scheduled yet.
func ForPod(pod *corev1.Pod, objs Objects) ([][]corev1.NodeSelectorRequirement, error) {
	var out [][]corev1.NodeSelectorRequirement
	for _, ref := range Claims(pod) {
		alts, err := forClaim(pod, ref, objs)
		if err != nil {
			return nil, err
		}
		if out, err = combine(out, alts); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// forClaim checks the claim as kube-scheduler's volume binding would and
// returns the topology of its volume, or of its storage class while unbound.
func forClaim(pod *corev1.Pod, ref ClaimRef, objs Objects) ([][]corev1.NodeSelectorRequirement, error) {
	pvc := objs.Claims[ref.Key]
	switch {
	case pvc == nil:
		return nil, fmt.Errorf("persistentvolumeclaim %q of volume %q does not exist yet", ref.Key.Name, ref.Volume)
	case ref.Ephemeral && !metav1.IsControlledBy(pvc, pod):
		return nil, fmt.Errorf("persistentvolumeclaim %q exists but was not created for the pod's ephemeral volume %q", pvc.Name, ref.Volume)
	case pvc.DeletionTimestamp != nil:
		return nil, fmt.Errorf("persistentvolumeclaim %q is being deleted", pvc.Name)
	case pvc.Status.Phase == corev1.ClaimLost:
		return nil, fmt.Errorf("persistentvolumeclaim %q lost its persistentvolume %q", pvc.Name, pvc.Spec.VolumeName)
	}
	if name := pvc.Spec.VolumeName; name != "" {
		pv := objs.Volumes[name]
		switch {
		case pv == nil:
			return nil, fmt.Errorf("persistentvolume %q of persistentvolumeclaim %q does not exist", name, pvc.Name)
		case pv.DeletionTimestamp != nil:
			return nil, fmt.Errorf("persistentvolume %q of persistentvolumeclaim %q is being deleted", name, pvc.Name)
		case pvc.Annotations[BindCompletedAnnotation] == "":
			return nil, fmt.Errorf("persistentvolumeclaim %q is not bound to persistentvolume %q yet", pvc.Name, name)
		}
		return FromPersistentVolume(pv), nil
	}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	if class == "" {
		return nil, fmt.Errorf("persistentvolumeclaim %q is unbound and names no storageclass", pvc.Name)
	}
	sc := objs.StorageClasses[class]
	if sc == nil {
		return nil, fmt.Errorf("storageclass %q of persistentvolumeclaim %q does not exist", class, pvc.Name)
	}
	// The API defaults the mode to Immediate: the volume is provisioned
	// before any pod uses it, so the pod waits for the binding.
	if sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		return nil, fmt.Errorf("persistentvolumeclaim %q is unbound and storageclass %q binds immediately; waiting for its volume", pvc.Name, class)
	}
	return FromStorageClass(sc), nil
}

// FromPersistentVolume returns one alternative per required node selector
// term of the volume's node affinity (terms are ORed), with legacy zone keys
// mapped to topology.kubernetes.io/zone. Hostname expressions of local and
// hostPath volumes are dropped: a pod that moves is not held to the node the
// data was on. nil when any node will do.
func FromPersistentVolume(pv *corev1.PersistentVolume) [][]corev1.NodeSelectorRequirement {
	na := pv.Spec.NodeAffinity
	if na == nil || na.Required == nil {
		return nil
	}
	nodeLocal := pv.Spec.Local != nil || pv.Spec.HostPath != nil
	var out [][]corev1.NodeSelectorRequirement
	for _, term := range na.Required.NodeSelectorTerms {
		var alt []corev1.NodeSelectorRequirement
		for _, e := range term.MatchExpressions {
			if nodeLocal && requirements.NormalizeKey(e.Key) == corev1.LabelHostname {
				continue
			}
			alt = append(alt, corev1.NodeSelectorRequirement{Key: requirements.NormalizeKey(e.Key), Operator: e.Operator, Values: slices.Clone(e.Values)})
		}
		if len(alt) == 0 {
			return nil // this term allows any node, so the volume restricts nothing
		}
		out = append(out, alt)
	}
	return out
}

// FromStorageClass returns one alternative per allowedTopologies term (terms
// are ORed, expressions within a term ANDed), with legacy zone keys mapped
// to topology.kubernetes.io/zone. nil when the class allows any topology.
func FromStorageClass(sc *storagev1.StorageClass) [][]corev1.NodeSelectorRequirement {
	var out [][]corev1.NodeSelectorRequirement
	for _, term := range sc.AllowedTopologies {
		var alt []corev1.NodeSelectorRequirement
		for _, e := range term.MatchLabelExpressions {
			alt = append(alt, corev1.NodeSelectorRequirement{Key: requirements.NormalizeKey(e.Key), Operator: corev1.NodeSelectorOpIn, Values: slices.Clone(e.Values)})
		}
		if len(alt) == 0 {
			return nil
		}
		out = append(out, alt)
	}
	return out
}

// combine ANDs the alternatives of another volume into acc: every pair, in
// preference order, dropping pairs whose In values of a key are disjoint.
func combine(acc, alts [][]corev1.NodeSelectorRequirement) ([][]corev1.NodeSelectorRequirement, error) {
	if len(alts) == 0 {
		return acc, nil
	}
	if len(acc) == 0 {
		return alts[:min(len(alts), maxAlternatives)], nil
	}
	var out [][]corev1.NodeSelectorRequirement
	conflict := ""
	for _, a := range acc {
		for _, b := range alts {
			both := append(slices.Clone(a), b...)
			if key := disjointKey(both); key != "" {
				conflict = key
				continue
			}
			if len(out) < maxAlternatives {
				out = append(out, both)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the pod's volumes allow no common value of %s", conflict)
	}
	return out, nil
}

// disjointKey returns a key whose In expressions allow no common value.
func disjointKey(reqs []corev1.NodeSelectorRequirement) string {
	allowed := map[string][]string{}
	for _, r := range reqs {
		if r.Operator != corev1.NodeSelectorOpIn {
			continue
		}
		cur, ok := allowed[r.Key]
		if !ok {
			allowed[r.Key] = r.Values
			continue
		}
		var both []string
		for _, v := range cur {
			if slices.Contains(r.Values, v) {
				both = append(both, v)
			}
		}
		if len(both) == 0 {
			return r.Key
		}
		allowed[r.Key] = both
	}
	return ""
}
