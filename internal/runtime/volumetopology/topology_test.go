package volumetopology

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const zoneKey = corev1.LabelTopologyZone

type alts = [][]corev1.NodeSelectorRequirement

func in(key string, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

func zones(values ...string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{in(zoneKey, values...)}
}

func pvWith(terms ...corev1.NodeSelectorTerm) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv"},
		Spec:       corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: terms}}},
	}
}

func term(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: reqs}
}

func TestFromPersistentVolume(t *testing.T) {
	local := pvWith(term(in(corev1.LabelHostname, "node-1"), in(zoneKey, "us-west-2a")))
	local.Spec.Local = &corev1.LocalVolumeSource{Path: "/mnt/disk"}
	onlyHost := pvWith(term(in(corev1.LabelHostname, "node-1")))
	onlyHost.Spec.HostPath = &corev1.HostPathVolumeSource{Path: "/data"}
	for _, tc := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want alts
	}{
		{"no node affinity restricts nothing", &corev1.PersistentVolume{}, nil},
		{"zone term pins the zone", pvWith(term(in(zoneKey, "us-west-2a"))), alts{zones("us-west-2a")}},
		{"legacy failure-domain zone key maps to the zone", pvWith(term(in(corev1.LabelFailureDomainBetaZone, "us-west-2b"))), alts{zones("us-west-2b")}},
		{"EBS CSI zone key maps to the zone", pvWith(term(in("topology.ebs.csi.aws.com/zone", "us-west-2c"))), alts{zones("us-west-2c")}},
		{"ORed terms become alternatives in order", pvWith(term(in(zoneKey, "us-west-2a")), term(in(zoneKey, "us-west-2b"))),
			alts{zones("us-west-2a"), zones("us-west-2b")}},
		{"other keys of a term are kept", pvWith(term(in(zoneKey, "us-west-2a"), in("example.com/rack", "r1"))),
			alts{{in(zoneKey, "us-west-2a"), in("example.com/rack", "r1")}}},
		{"local volume drops its hostname", local, alts{zones("us-west-2a")}},
		{"hostPath volume pinned only by hostname restricts nothing", onlyHost, nil},
		{"network volume keeps its hostname", pvWith(term(in(corev1.LabelHostname, "node-1"))), alts{{in(corev1.LabelHostname, "node-1")}}},
		{"a term with no expressions allows any node", pvWith(term(in(zoneKey, "us-west-2a")), corev1.NodeSelectorTerm{}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromPersistentVolume(tc.pv); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func class(name string, mode storagev1.VolumeBindingMode, terms ...[]corev1.TopologySelectorLabelRequirement) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &mode}
	for _, t := range terms {
		sc.AllowedTopologies = append(sc.AllowedTopologies, corev1.TopologySelectorTerm{MatchLabelExpressions: t})
	}
	return sc
}

func topo(key string, values ...string) []corev1.TopologySelectorLabelRequirement {
	return []corev1.TopologySelectorLabelRequirement{{Key: key, Values: values}}
}

func TestFromStorageClass(t *testing.T) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	for _, tc := range []struct {
		name string
		sc   *storagev1.StorageClass
		want alts
	}{
		{"no allowed topologies restricts nothing", class("gp3", wffc), nil},
		{"allowed zones become an In requirement", class("gp3", wffc, topo(zoneKey, "us-west-2a", "us-west-2b")), alts{zones("us-west-2a", "us-west-2b")}},
		{"EBS CSI zone key maps to the zone", class("gp3", wffc, topo("topology.ebs.csi.aws.com/zone", "us-west-2c")), alts{zones("us-west-2c")}},
		{"ORed terms become alternatives in order", class("gp3", wffc, topo(zoneKey, "us-west-2a"), topo(corev1.LabelFailureDomainBetaZone, "us-west-2d")),
			alts{zones("us-west-2a"), zones("us-west-2d")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromStorageClass(tc.sc); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func pod(volumes ...corev1.Volume) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "pod-uid"}, Spec: corev1.PodSpec{Volumes: volumes}}
}

func claimVolume(name, claim string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func ephemeralVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}
}

func boundClaim(name, volume string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{BindCompletedAnnotation: "yes"}},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: volume},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
}

func unboundClaim(name, class string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &class},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

func zonalPV(name string, zone ...string) *corev1.PersistentVolume {
	pv := pvWith(term(in(zoneKey, zone...)))
	pv.Name = name
	return pv
}

func objects(items ...any) Objects {
	o := NewObjects()
	for _, it := range items {
		switch v := it.(type) {
		case *corev1.PersistentVolumeClaim:
			o.Claims[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = v
		case *corev1.PersistentVolume:
			o.Volumes[v.Name] = v
		case *storagev1.StorageClass:
			o.StorageClasses[v.Name] = v
		}
	}
	return o
}

func TestForPod(t *testing.T) {
	wffc, immediate := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	owned := func(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
		c.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(pod(), corev1.SchemeGroupVersion.WithKind("Pod"))}
		return c
	}
	deleting := func(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
		now := metav1.Now()
		c.DeletionTimestamp = &now
		return c
	}
	bound := func(p *corev1.Pod) *corev1.Pod { p.Spec.NodeName = "node-1"; return p }
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		objs    Objects
		want    alts
		wantErr string
	}{
		{"volumes without claims restrict nothing",
			pod(corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}), objects(), nil, ""},
		{"bound claim follows its volume's zone",
			pod(claimVolume("data", "data")), objects(boundClaim("data", "pv-a"), zonalPV("pv-a", "us-west-2a")), alts{zones("us-west-2a")}, ""},
		{"unbound wait-for-first-consumer claim follows its class's allowed zones",
			pod(claimVolume("data", "data")), objects(unboundClaim("data", "zonal"), class("zonal", wffc, topo(zoneKey, "us-west-2b"))), alts{zones("us-west-2b")}, ""},
		{"unbound claim of a class without allowed topologies restricts nothing",
			pod(claimVolume("data", "data")), objects(unboundClaim("data", "gp3"), class("gp3", wffc)), nil, ""},
		{"ephemeral volume follows its generated claim's class",
			pod(ephemeralVolume("scratch")), objects(owned(unboundClaim("web-scratch", "zonal")), class("zonal", wffc, topo(zoneKey, "us-west-2c"))), alts{zones("us-west-2c")}, ""},
		{"ephemeral volume of a bound pod is not looked at",
			bound(pod(ephemeralVolume("scratch"))), objects(), nil, ""},
		{"two volumes intersect their zones",
			pod(claimVolume("a", "a"), claimVolume("b", "b")),
			objects(boundClaim("a", "pv-a"), zonalPV("pv-a", "us-west-2a", "us-west-2b"), unboundClaim("b", "zonal"), class("zonal", wffc, topo(zoneKey, "us-west-2b"), topo(zoneKey, "us-west-2a"))),
			alts{{in(zoneKey, "us-west-2a", "us-west-2b"), in(zoneKey, "us-west-2b")}, {in(zoneKey, "us-west-2a", "us-west-2b"), in(zoneKey, "us-west-2a")}}, ""},
		{"the same claim twice counts once",
			pod(claimVolume("a", "data"), claimVolume("b", "data")), objects(boundClaim("data", "pv-a"), zonalPV("pv-a", "us-west-2a")), alts{zones("us-west-2a")}, ""},
		{"volumes in different zones cannot be used together",
			pod(claimVolume("a", "a"), claimVolume("b", "b")),
			objects(boundClaim("a", "pv-a"), zonalPV("pv-a", "us-west-2a"), boundClaim("b", "pv-b"), zonalPV("pv-b", "us-west-2b")),
			nil, "no common value of topology.kubernetes.io/zone"},
		{"claim that does not exist yet", pod(claimVolume("data", "data")), objects(), nil, `persistentvolumeclaim "data" of volume "data" does not exist yet`},
		{"ephemeral claim not created yet", pod(ephemeralVolume("scratch")), objects(), nil, `persistentvolumeclaim "web-scratch" of volume "scratch" does not exist yet`},
		{"ephemeral claim owned by someone else",
			pod(ephemeralVolume("scratch")), objects(unboundClaim("web-scratch", "zonal"), class("zonal", wffc)), nil, "was not created for the pod's ephemeral volume"},
		{"claim being deleted", pod(claimVolume("data", "data")), objects(deleting(boundClaim("data", "pv-a")), zonalPV("pv-a", "us-west-2a")), nil, "is being deleted"},
		{"storage class that does not exist", pod(claimVolume("data", "data")), objects(unboundClaim("data", "missing")), nil, `storageclass "missing" of persistentvolumeclaim "data" does not exist`},
		{"unbound claim of an immediate class waits for its volume",
			pod(claimVolume("data", "data")), objects(unboundClaim("data", "fast"), class("fast", immediate, topo(zoneKey, "us-west-2a"))), nil, "binds immediately"},
		{"unbound claim without a class", pod(claimVolume("data", "data")), objects(unboundClaim("data", "")), nil, "names no storageclass"},
		{"bound volume that does not exist", pod(claimVolume("data", "data")), objects(boundClaim("data", "pv-gone")), nil, `persistentvolume "pv-gone" of persistentvolumeclaim "data" does not exist`},
		{"claim naming a volume before the binding completed", pod(claimVolume("data", "data")),
			objects(func() *corev1.PersistentVolumeClaim { c := boundClaim("data", "pv-a"); c.Annotations = nil; return c }(), zonalPV("pv-a", "us-west-2a")),
			nil, "is not bound to persistentvolume"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ForPod(tc.pod, tc.objs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCombineKeepsTheMostPreferredAlternatives(t *testing.T) {
	var many alts
	for _, z := range []string{"a", "b", "c", "d", "e"} {
		many = append(many, []corev1.NodeSelectorRequirement{in("example.com/x", z)})
	}
	acc, err := combine(nil, many)
	if err != nil {
		t.Fatal(err)
	}
	if acc, err = combine(acc, alts{zones("z1"), zones("z2"), zones("z3"), zones("z4")}); err != nil {
		t.Fatal(err)
	}
	if len(acc) != maxAlternatives {
		t.Fatalf("%d alternatives, want the first %d of 20", len(acc), maxAlternatives)
	}
	if first := acc[0]; !reflect.DeepEqual(first, []corev1.NodeSelectorRequirement{in("example.com/x", "a"), in(zoneKey, "z1")}) {
		t.Errorf("first alternative %v, want both volumes' first choices", first)
	}
}
