package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePoolSpec says what nodes a NodePool may launch for unschedulable pods
// and how they may be disrupted. A pool with Replicas set is static: it keeps
// that many nodes whatever the pods ask for.
// +kubebuilder:validation:XValidation:rule="has(self.replicas) == has(oldSelf.replicas)",message="a NodePool cannot switch between static (replicas set) and dynamic (replicas unset) provisioning, create a new NodePool instead"
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits))",message="a static NodePool (replicas set) supports only limits.nodes, remove the other limits"
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || !has(self.weight)",message="'weight' is not supported on a static NodePool (replicas set), remove it"
type NodePoolSpec struct {
	// Template is the NodeClaim every launch from this pool starts from; a
	// NodeClaim's requirements are usually narrower than the template's.
	// +required
	Template NodeClaimTemplate `json:"template"`
	// Disruption configures consolidation and disruption budgets.
	// +kubebuilder:default:={consolidateAfter: "0s"}
	// +optional
	Disruption Disruption `json:"disruption"`
	// Limits caps the total capacity (any resource name, plus "nodes") of the
	// nodes owned by this pool. A limit may not be negative; an absent one
	// does not bound.
	// +optional
	Limits Limits `json:"limits,omitempty"`
	// Weight orders pools for scheduling: higher first; unset counts as 0.
	// +kubebuilder:validation:Minimum:=1
	// +kubebuilder:validation:Maximum:=100
	// +optional
	Weight *int32 `json:"weight,omitempty"`
	// Replicas makes the pool static: it keeps this many nodes regardless of
	// pod demand. With Replicas set, disruption.consolidationPolicy and
	// disruption.consolidateAfter do not apply, only limits.nodes may be set
	// and weight may not. A pool cannot switch between static and dynamic.
	// +kubebuilder:validation:Minimum:=0
	// +optional
	Replicas *int64 `json:"replicas,omitempty"`
}

// Limits bound the resources a NodePool's nodes may add up to.
type Limits corev1.ResourceList

// NodeClaimTemplate is a NodeClaim template: metadata and spec copied to every
// NodeClaim of the pool.
type NodeClaimTemplate struct {
	ObjectMeta `json:"metadata,omitempty"`
	// +required
	Spec NodeClaimTemplateSpec `json:"spec"`
}

// ObjectMeta is the part of metadata a template may set.
type ObjectMeta struct {
	// Labels are applied to every NodeClaim and Node and count as
	// requirements. Keys in the restricted domains (see IsRestrictedLabel) are
	// refused. Values are checked by the schema (patched in by hack/generate.sh).
	// +kubebuilder:validation:MaxProperties:=100
	// +kubebuilder:validation:XValidation:message="label keys must be qualified names of at most 316 characters, such as 'example.com/team'",rule="self.all(x, x.size() <= 316 && x.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\\\\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$'))"
	// +kubebuilder:validation:XValidation:message="label domain \"karpenter.sh\" is restricted, use a well-known key or a key in a domain of your own",rule="self.all(x, x in [\"karpenter.sh/capacity-type\", \"karpenter.sh/nodepool\"] || !x.find(\"^([^/]+)\").endsWith(\"karpenter.sh\"))"
	// +kubebuilder:validation:XValidation:message="label \"karpenter.sh/nodepool\" is restricted, the runtime sets it on each node",rule="self.all(x, x != \"karpenter.sh/nodepool\")"
	// +kubebuilder:validation:XValidation:message="label \"kubernetes.io/hostname\" is restricted, the runtime sets it on each node",rule="self.all(x, x != \"kubernetes.io/hostname\")"
	// +kubebuilder:validation:XValidation:message="label domain \"karpenter.k8s.aws\" is restricted, use a well-known key or a key in a domain of your own",rule="self.all(x, x in [\"karpenter.k8s.aws/instance-tenancy\", \"karpenter.k8s.aws/capacity-reservation-type\", \"karpenter.k8s.aws/capacity-reservation-id\", \"karpenter.k8s.aws/capacity-reservation-interruptible\", \"karpenter.k8s.aws/capacity-reservation-interruptible\", \"karpenter.k8s.aws/ec2nodeclass\", \"karpenter.k8s.aws/instance-encryption-in-transit-supported\", \"karpenter.k8s.aws/instance-category\", \"karpenter.k8s.aws/instance-hypervisor\", \"karpenter.k8s.aws/instance-family\", \"karpenter.k8s.aws/instance-generation\", \"karpenter.k8s.aws/instance-local-nvme\", \"karpenter.k8s.aws/instance-size\", \"karpenter.k8s.aws/instance-cpu\", \"karpenter.k8s.aws/instance-cpu-manufacturer\", \"karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz\", \"karpenter.k8s.aws/instance-memory\", \"karpenter.k8s.aws/instance-ebs-bandwidth\", \"karpenter.k8s.aws/instance-network-bandwidth\", \"karpenter.k8s.aws/instance-gpu-name\", \"karpenter.k8s.aws/instance-gpu-manufacturer\", \"karpenter.k8s.aws/instance-gpu-count\", \"karpenter.k8s.aws/instance-gpu-memory\", \"karpenter.k8s.aws/instance-accelerator-name\", \"karpenter.k8s.aws/instance-accelerator-manufacturer\", \"karpenter.k8s.aws/instance-accelerator-count\", \"karpenter.k8s.aws/instance-capability-flex\", \"karpenter.k8s.aws/placement-group-id\", \"karpenter.k8s.aws/placement-group-partition\"] || !x.find(\"^([^/]+)\").endsWith(\"karpenter.k8s.aws\"))"
	// +mapType=atomic
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are copied to every NodeClaim and Node.
	// +mapType=granular
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is a NodeClaimSpec without resource requests, which
// only scheduling fills in.
type NodeClaimTemplateSpec struct {
	// Taints are put on every node; pods must tolerate them to land there.
	// +listType=atomic
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are put on every node at creation and must be removed by
	// some other agent (typically a DaemonSet) before the node is Initialized;
	// pods need not tolerate them to be provisioned for.
	// +listType=atomic
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements constrain the nodes the pool may launch; template labels
	// are added to them. Unlike a NodeClaim's, they may not name the NodePool
	// label, which the runtime adds.
	// +required
	Requirements Requirements `json:"requirements" hash:"ignore"`
	// NodeClassRef names the provider configuration (an EC2NodeClass).
	// +kubebuilder:validation:XValidation:rule="self.group == oldSelf.group",message="nodeClassRef.group is immutable, create a new NodePool to change it"
	// +kubebuilder:validation:XValidation:rule="self.kind == oldSelf.kind",message="nodeClassRef.kind is immutable, create a new NodePool to change it"
	// +required
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// TerminationGracePeriod is the longest a node may take to drain once its
	// deletion starts; after it, pods are deleted regardless of PDBs,
	// do-not-disrupt annotations and their own grace periods. Unset waits forever.
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
	// ExpireAfter is how long after creation a node is replaced; "Never" disables expiry.
	// +kubebuilder:default:="720h"
	// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Schemaless
	// +optional
	ExpireAfter NillableDuration `json:"expireAfter,omitempty"`
}

// NodeClassReference points at a cluster-scoped node class object.
type NodeClassReference struct {
	// Kind of the node class, e.g. EC2NodeClass.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="kind may not be empty, set it to the node class kind (EC2NodeClass)"
	// +required
	Kind string `json:"kind"`
	// Name of the node class object.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="name may not be empty, set it to the name of a node class"
	// +required
	Name string `json:"name"`
	// Group of the node class, e.g. karpenter.k8s.aws (no version).
	// +kubebuilder:validation:Pattern=`^[^/]*$`
	// +kubebuilder:validation:XValidation:rule="self != ''",message="group may not be empty, set it to the node class API group (karpenter.k8s.aws)"
	// +required
	Group string `json:"group"`
}

// NodePool is a set of nodes the runtime may launch and disrupt, with the
// constraints every one of them satisfies.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=nodepools,scope=Cluster,categories=karpenter
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.template.spec.nodeClassRef.name",description=""
// +kubebuilder:printcolumn:name="Nodes",type="string",JSONPath=".status.nodes",description=""
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description=""
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description=""
// +kubebuilder:printcolumn:name="Weight",type="integer",JSONPath=".spec.weight",priority=1,description=""
// +kubebuilder:printcolumn:name="CPU",type="string",JSONPath=".status.resources.cpu",priority=1,description=""
// +kubebuilder:printcolumn:name="Memory",type="string",JSONPath=".status.resources.memory",priority=1,description=""
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.nodes
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   NodePoolSpec   `json:"spec"`
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolList is a list of NodePools.
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}
