package validate

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// rule is the Go version of one CRD x-kubernetes-validations rule. It
// returns where the rule fails, relative to self: nil when it holds, a
// single empty Path when self as a whole is at fault, or the list elements
// and map entries at fault for rules of the form self.all(...) and
// self.exists(...), or the field a rule about an object is best fixed in.
// The apiserver reports every failure at self; naming the element or field
// is more useful and names a path inside the apiserver's.
type rule func(self, oldSelf any) []Path

// here is the failure of a rule about self as a whole.
var here = []Path{{}}

// celRules maps the text of every rule in the generated CRDs to its Go
// version. TestEveryCRDRuleHasAGoVersion keeps the two in step: a rule added
// to the API types without a Go version here fails that test, and
// validation reports it as an internal error rather than passing silently.
var celRules = map[string]rule{
	// NodePool disruption budgets.
	`self.all(x, has(x.schedule) == has(x.duration))`: eachItem(func(x map[string]any) bool {
		return has(x, "schedule") == has(x, "duration")
	}),

	// Template labels: key syntax and the restricted domains.
	`self.all(x, x.size() <= 316 && x.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$'))`: eachKey(func(k string, _ any) bool {
		return len([]rune(k)) <= 316 && pattern(qualifiedName).MatchString(k)
	}),
	`self.all(x, x in ['beta.kubernetes.io/instance-type', 'failure-domain.beta.kubernetes.io/region', 'beta.kubernetes.io/os', 'beta.kubernetes.io/arch', 'failure-domain.beta.kubernetes.io/zone', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type', 'kubernetes.io/arch', 'kubernetes.io/os', 'node.kubernetes.io/windows-build'] || x.find('^([^/]+)').endsWith('node.kubernetes.io') || x.find('^([^/]+)').endsWith('node-restriction.kubernetes.io') || !x.find('^([^/]+)').endsWith('kubernetes.io'))`: eachKey(keyAllowedIn("kubernetes.io")),
	`self.all(x, x.find('^([^/]+)').endsWith('kops.k8s.io') || !x.find('^([^/]+)').endsWith('k8s.io'))`:                         eachKey(keyAllowedIn("k8s.io")),
	`self.all(x, x in ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] || !x.find('^([^/]+)').endsWith('karpenter.sh'))`: eachKey(keyAllowedIn(v1.Group)),
	`self.all(x, x != 'karpenter.sh/nodepool')`:  eachKey(keyIsNot(v1.NodePoolLabelKey)),
	`self.all(x, x != 'kubernetes.io/hostname')`: eachKey(keyIsNot("kubernetes.io/hostname")),
	`self.all(x, x in ['karpenter.k8s.aws/ec2nodeclass', 'karpenter.k8s.aws/instance-encryption-in-transit-supported', 'karpenter.k8s.aws/instance-category', 'karpenter.k8s.aws/instance-hypervisor', 'karpenter.k8s.aws/instance-family', 'karpenter.k8s.aws/instance-generation', 'karpenter.k8s.aws/instance-local-nvme', 'karpenter.k8s.aws/instance-size', 'karpenter.k8s.aws/instance-cpu', 'karpenter.k8s.aws/instance-cpu-manufacturer', 'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz', 'karpenter.k8s.aws/instance-memory', 'karpenter.k8s.aws/instance-ebs-bandwidth', 'karpenter.k8s.aws/instance-network-bandwidth', 'karpenter.k8s.aws/instance-gpu-name', 'karpenter.k8s.aws/instance-gpu-manufacturer', 'karpenter.k8s.aws/instance-gpu-count', 'karpenter.k8s.aws/instance-gpu-memory', 'karpenter.k8s.aws/instance-accelerator-name', 'karpenter.k8s.aws/instance-accelerator-manufacturer', 'karpenter.k8s.aws/instance-accelerator-count', 'karpenter.k8s.aws/instance-capability-flex', 'karpenter.k8s.aws/instance-tenancy', 'karpenter.k8s.aws/capacity-reservation-id', 'karpenter.k8s.aws/capacity-reservation-type', 'karpenter.k8s.aws/capacity-reservation-interruptible', 'karpenter.k8s.aws/placement-group-id', 'karpenter.k8s.aws/placement-group-partition'] || !x.find('^([^/]+)').endsWith('karpenter.k8s.aws'))`: eachKey(keyAllowedIn(v1.AWSGroup)),

	// Static NodePools (spec.replicas).
	`has(self.replicas) == has(oldSelf.replicas)`: func(self, old any) []Path {
		return failAt(has(obj(self), "replicas") != has(obj(old), "replicas"), "replicas")
	},
	`!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits))`: func(self, _ any) []Path {
		s := obj(self)
		if !has(s, "replicas") {
			return nil
		}
		limits := obj(s["limits"])
		_, nodes := limits["nodes"]
		return failAt(len(limits) > 1 || (len(limits) == 1 && !nodes), "limits")
	},
	`!has(self.replicas) || !has(self.weight)`: func(self, _ any) []Path {
		s := obj(self)
		return failAt(has(s, "replicas") && has(s, "weight"), "weight")
	},

	// nodeClassRef.
	`self.group == oldSelf.group`: unchanged("group"),
	`self.kind == oldSelf.kind`:   unchanged("kind"),
	`self != ''`: func(self, _ any) []Path {
		return failIf(self == "")
	},

	// Requirements.
	`self.all(x, x.key != 'karpenter.sh/nodepool')`: eachItem(func(x map[string]any) bool {
		return x["key"] != v1.NodePoolLabelKey
	}),
	`self.all(x, x.operator == 'In' ? has(x.values) && x.values.size() != 0 : true)`: eachItem(func(x map[string]any) bool {
		return x["operator"] != "In" || len(list(x["values"])) != 0
	}),
	`self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (has(x.values) && x.values.size() == 1 && x.values[0].matches('^[0-9]+$')) : true)`: eachItem(func(x map[string]any) bool {
		if !slices.Contains([]any{"Gt", "Lt", "Gte", "Lte"}, x["operator"]) {
			return true
		}
		values := list(x["values"])
		if len(values) != 1 {
			return false
		}
		s, ok := values[0].(string)
		return ok && pattern(`^[0-9]+$`).MatchString(s)
	}),
	`self.all(x, (x.operator == 'In' && has(x.minValues)) ? has(x.values) && x.values.size() >= x.minValues : true)`: eachItem(func(x map[string]any) bool {
		if x["operator"] != "In" || !has(x, "minValues") {
			return true
		}
		minValues, _ := asInt(x["minValues"])
		return int64(len(list(x["values"]))) >= minValues
	}),
	`self in ['beta.kubernetes.io/instance-type', 'failure-domain.beta.kubernetes.io/region', 'beta.kubernetes.io/os', 'beta.kubernetes.io/arch', 'failure-domain.beta.kubernetes.io/zone', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type', 'kubernetes.io/arch', 'kubernetes.io/os', 'node.kubernetes.io/windows-build'] || self.find('^([^/]+)').endsWith('node.kubernetes.io') || self.find('^([^/]+)').endsWith('node-restriction.kubernetes.io') || !self.find('^([^/]+)').endsWith('kubernetes.io')`: selfKey(keyAllowedIn("kubernetes.io")),
	`self.find('^([^/]+)').endsWith('kops.k8s.io') || !self.find('^([^/]+)').endsWith('k8s.io')`:                         selfKey(keyAllowedIn("k8s.io")),
	`self in ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] || !self.find('^([^/]+)').endsWith('karpenter.sh')`: selfKey(keyAllowedIn(v1.Group)),
	`self != 'kubernetes.io/hostname'`: selfKey(keyIsNot("kubernetes.io/hostname")),
	`self in ['karpenter.k8s.aws/ec2nodeclass', 'karpenter.k8s.aws/instance-encryption-in-transit-supported', 'karpenter.k8s.aws/instance-category', 'karpenter.k8s.aws/instance-hypervisor', 'karpenter.k8s.aws/instance-family', 'karpenter.k8s.aws/instance-generation', 'karpenter.k8s.aws/instance-local-nvme', 'karpenter.k8s.aws/instance-size', 'karpenter.k8s.aws/instance-cpu', 'karpenter.k8s.aws/instance-cpu-manufacturer', 'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz', 'karpenter.k8s.aws/instance-memory', 'karpenter.k8s.aws/instance-ebs-bandwidth', 'karpenter.k8s.aws/instance-network-bandwidth', 'karpenter.k8s.aws/instance-gpu-name', 'karpenter.k8s.aws/instance-gpu-manufacturer', 'karpenter.k8s.aws/instance-gpu-count', 'karpenter.k8s.aws/instance-gpu-memory', 'karpenter.k8s.aws/instance-accelerator-name', 'karpenter.k8s.aws/instance-accelerator-manufacturer', 'karpenter.k8s.aws/instance-accelerator-count', 'karpenter.k8s.aws/instance-capability-flex', 'karpenter.k8s.aws/instance-tenancy', 'karpenter.k8s.aws/capacity-reservation-id', 'karpenter.k8s.aws/capacity-reservation-type', 'karpenter.k8s.aws/capacity-reservation-interruptible', 'karpenter.k8s.aws/placement-group-id', 'karpenter.k8s.aws/placement-group-partition'] || !self.find('^([^/]+)').endsWith('karpenter.k8s.aws')`: selfKey(keyAllowedIn(v1.AWSGroup)),

	// NodeClaim spec.
	`self == oldSelf`: func(self, old any) []Path {
		return failIf(!reflect.DeepEqual(normalizeNumbers(self), normalizeNumbers(old)))
	},

	// EC2NodeClass spec.
	`(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))`: func(self, _ any) []Path {
		s := obj(self)
		return failAt(has(s, "role") == has(s, "instanceProfile"), "role")
	},
	`!has(oldSelf.instanceProfile) || has(self.instanceProfile)`: func(self, old any) []Path {
		return failAt(has(obj(old), "instanceProfile") && !has(obj(self), "instanceProfile"), "instanceProfile")
	},
	`!has(self.amiFamily) || self.amiFamily == 'Custom' || !self.amiSelectorTerms.exists(x, has(x.alias)) || self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == self.amiFamily.lowerAscii())`: func(self, _ any) []Path {
		s := obj(self)
		family, ok := s["amiFamily"].(string)
		if !ok || family == "Custom" {
			return nil
		}
		alias, hasAlias := aliasOf(s)
		if !hasAlias {
			return nil
		}
		aliasFamily, _, _ := strings.Cut(alias, "@")
		return failAt(aliasFamily != strings.ToLower(family), "amiFamily")
	},
	`self.amiSelectorTerms.exists(x, has(x.alias)) ? true : has(self.amiFamily)`: func(self, _ any) []Path {
		s := obj(self)
		_, hasAlias := aliasOf(s)
		return failAt(!hasAlias && !has(s, "amiFamily"), "amiFamily")
	},
	`self.all(x, has(x.tags) || has(x.id) || has(x.name) || has(x.alias) || has(x.ssmParameter))`: eachItem(hasAny("tags", "id", "name", "alias", "ssmParameter")),
	`!self.exists(x, has(x.id) && (has(x.alias) || has(x.tags) || has(x.name) || has(x.owner)))`:  eachItem(exclusive("id", "alias", "tags", "name", "owner")),
	`!self.exists(x, has(x.alias) && (has(x.id) || has(x.tags) || has(x.name) || has(x.owner)))`:  eachItem(exclusive("alias", "id", "tags", "name", "owner")),
	`!(self.exists(x, has(x.alias)) && self.size() != 1)`: func(self, _ any) []Path {
		terms := list(self)
		_, hasAlias := aliasOf(map[string]any{"amiSelectorTerms": self})
		return failIf(hasAlias && len(terms) != 1)
	},
	`self.matches('^[a-zA-Z0-9]+@.+$')`: func(self, _ any) []Path {
		s, _ := self.(string)
		return failIf(!pattern(`^[a-zA-Z0-9]+@.+$`).MatchString(s))
	},
	`self.find('^[^@]+') in ['al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025']`: func(self, _ any) []Path {
		s, _ := self.(string)
		family := pattern(`^[^@]+`).FindString(s)
		return failIf(!slices.Contains([]string{"al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025"}, family))
	},
	`self.find('^[^@]+') in ['windows2019', 'windows2022', 'windows2025'] ? self.find('@.*$') == '@latest' : true`: func(self, _ any) []Path {
		s, _ := self.(string)
		family := pattern(`^[^@]+`).FindString(s)
		if !slices.Contains([]string{"windows2019", "windows2022", "windows2025"}, family) {
			return nil
		}
		return failIf(pattern(`@.*$`).FindString(s) != "@latest")
	},
	`self.all(k, k != '' && self[k] != '')`: eachKey(func(k string, v any) bool { return k != "" && v != "" }),
	`self.filter(x, has(x.rootVolume) ? x.rootVolume == true : false).size() <= 1`: func(self, _ any) []Path {
		var roots []Path
		for i, x := range list(self) {
			if obj(x)["rootVolume"] == true {
				roots = append(roots, Path{}.Index(i))
			}
		}
		if len(roots) <= 1 {
			return nil
		}
		return roots[1:]
	},
	`has(self.snapshotID) || has(self.volumeSize)`: func(self, _ any) []Path {
		return failIf(!hasAny("snapshotID", "volumeSize")(obj(self)))
	},
	`!has(self.volumeInitializationRate) || (has(self.snapshotID) && self.snapshotID != '')`: func(self, _ any) []Path {
		s := obj(self)
		return failIf(has(s, "volumeInitializationRate") && (!has(s, "snapshotID") || s["snapshotID"] == ""))
	},
	`self.size() == 0 || self.exists(x, x.networkCardIndex == 0 && x.deviceIndex == 0 && x.interfaceType == 'interface')`: func(self, _ any) []Path {
		items := list(self)
		for _, x := range items {
			m := obj(x)
			if intIs(m["networkCardIndex"], 0) && intIs(m["deviceIndex"], 0) && m["interfaceType"] == "interface" {
				return nil
			}
		}
		return failIf(len(items) != 0)
	},
	`self.all(x, self.filter(y, y.networkCardIndex == x.networkCardIndex && y.deviceIndex == x.deviceIndex).size() == 1)`: func(self, _ any) []Path {
		return duplicatesBy(list(self), func(x map[string]any) (string, bool) {
			return fmt.Sprint(x["networkCardIndex"], "/", x["deviceIndex"]), true
		})
	},
	`self.all(x, x.interfaceType != 'efa-only' || self.filter(y, y.interfaceType == 'efa-only' && y.networkCardIndex == x.networkCardIndex).size() == 1)`: func(self, _ any) []Path {
		return duplicatesBy(list(self), func(x map[string]any) (string, bool) {
			return fmt.Sprint(x["networkCardIndex"]), x["interfaceType"] == "efa-only"
		})
	},
	`has(self.name) != has(self.id)`: func(self, _ any) []Path {
		s := obj(self)
		return failIf(has(s, "name") == has(s, "id"))
	},
	`self.all(x, has(x.tags) || has(x.id) || has(x.instanceMatchCriteria))`:                         eachItem(hasAny("tags", "id", "instanceMatchCriteria")),
	`!self.exists(x, has(x.id) && (has(x.tags) || has(x.ownerID) || has(x.instanceMatchCriteria)))`: eachItem(exclusive("id", "tags", "ownerID", "instanceMatchCriteria")),
	`has(self.imageGCHighThresholdPercent) && has(self.imageGCLowThresholdPercent) ? self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent : true`: func(self, _ any) []Path {
		s := obj(self)
		if !has(s, "imageGCHighThresholdPercent") || !has(s, "imageGCLowThresholdPercent") {
			return nil
		}
		high, _ := asInt(s["imageGCHighThresholdPercent"])
		low, _ := asInt(s["imageGCLowThresholdPercent"])
		return failIf(high <= low)
	},
	`has(self.evictionSoft) ? self.evictionSoft.all(e, has(self.evictionSoftGracePeriod) && e in self.evictionSoftGracePeriod) : true`: func(self, _ any) []Path {
		return keysCovered(obj(self), "evictionSoft", "evictionSoftGracePeriod")
	},
	`has(self.evictionSoftGracePeriod) ? self.evictionSoftGracePeriod.all(e, has(self.evictionSoft) && e in self.evictionSoft) : true`: func(self, _ any) []Path {
		return keysCovered(obj(self), "evictionSoftGracePeriod", "evictionSoft")
	},
	`self.all(x, x in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])`: eachKey(keyIn("memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available")),
	`self.all(x, x=='cpu' || x=='memory' || x=='ephemeral-storage' || x=='pid')`:                                                             eachKey(keyIn("cpu", "memory", "ephemeral-storage", "pid")),
	`self.all(x, !self[x].startsWith('-'))`: eachKey(func(_ string, v any) bool {
		s, _ := v.(string)
		return !strings.HasPrefix(s, "-")
	}),
	`self.size() != 0`: func(self, _ any) []Path {
		return failIf(len(list(self)) == 0 && len(obj(self)) == 0)
	},
	`self.all(x, has(x.tags) || has(x.id) || has(x.name))`:       eachItem(hasAny("tags", "id", "name")),
	`!self.exists(x, has(x.id) && (has(x.tags) || has(x.name)))`: eachItem(exclusive("id", "tags", "name")),
	`!self.exists(x, has(x.name) && (has(x.tags) || has(x.id)))`: eachItem(exclusive("name", "tags", "id")),
	`self.all(x, has(x.tags) || has(x.id))`:                      eachItem(hasAny("tags", "id")),
	`!self.exists(x, has(x.id) && has(x.tags))`:                  eachItem(exclusive("id", "tags")),
	`self.all(k, k != '')`:                                       eachKey(func(k string, _ any) bool { return k != "" }),
	`self.all(k, k != 'eks:eks-cluster-name')`:                   eachKey(keyIsNot("eks:eks-cluster-name")),
	`self.all(k, !k.startsWith('kubernetes.io/cluster'))`: eachKey(func(k string, _ any) bool {
		return !strings.HasPrefix(k, "kubernetes.io/cluster")
	}),
	`self.all(k, k != 'karpenter.sh/nodepool')`:          eachKey(keyIsNot(v1.NodePoolLabelKey)),
	`self.all(k, k != 'karpenter.sh/nodeclaim')`:         eachKey(keyIsNot("karpenter.sh/nodeclaim")),
	`self.all(k, k != 'karpenter.k8s.aws/ec2nodeclass')`: eachKey(keyIsNot(v1.LabelNodeClass)),
}

// qualifiedName is the label-key syntax the CRD's key rules use.
const qualifiedName = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`

// failAt is a failure of a rule on an object that one of its fields is
// best fixed in.
func failAt(bad bool, field string) []Path {
	if bad {
		return []Path{Path{}.Child(field)}
	}
	return nil
}

func failIf(bad bool) []Path {
	if bad {
		return here
	}
	return nil
}

func has(m map[string]any, k string) bool {
	v, ok := m[k]
	return ok && v != nil
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// eachItem is self.all(x, ok(x)) over a list, failing at each bad element.
func eachItem(ok func(x map[string]any) bool) rule {
	return func(self, _ any) []Path {
		var bad []Path
		for i, x := range list(self) {
			if !ok(obj(x)) {
				bad = append(bad, Path{}.Index(i))
			}
		}
		return bad
	}
}

// eachKey is self.all(k, ok(k, self[k])) over a map, failing at each bad entry.
func eachKey(ok func(k string, v any) bool) rule {
	return func(self, _ any) []Path {
		m := obj(self)
		var bad []Path
		for _, k := range sortedKeys(m) {
			if !ok(k, m[k]) {
				bad = append(bad, Path{}.Key(k))
			}
		}
		return bad
	}
}

// selfKey applies a key predicate to a string self.
func selfKey(ok func(k string, v any) bool) rule {
	return func(self, _ any) []Path {
		s, _ := self.(string)
		return failIf(!ok(s, nil))
	}
}

func keyIsNot(forbidden string) func(string, any) bool {
	return func(k string, _ any) bool { return k != forbidden }
}

func keyIn(allowed ...string) func(string, any) bool {
	return func(k string, _ any) bool { return slices.Contains(allowed, k) }
}

// keyAllowedIn is the CRD's rule for one restricted label domain: a key
// whose domain (the text before the first slash) ends in restricted is
// refused unless it is a well-known label or lies in an exception subdomain.
func keyAllowedIn(restricted string) func(string, any) bool {
	return func(k string, _ any) bool {
		domain, _, _ := strings.Cut(k, "/")
		if !strings.HasSuffix(domain, restricted) {
			return true
		}
		if _, alias := v1.NormalizedLabels[k]; alias || slices.Contains(v1.WellKnownLabels, k) {
			return true
		}
		return slices.ContainsFunc(v1.LabelDomainExceptions, func(e string) bool {
			return strings.HasSuffix(e, restricted) && strings.HasSuffix(domain, e)
		})
	}
}

// hasAny is has(x.a) || has(x.b) || ...
func hasAny(fields ...string) func(map[string]any) bool {
	return func(x map[string]any) bool {
		return slices.ContainsFunc(fields, func(f string) bool { return has(x, f) })
	}
}

// exclusive is !(has(x.first) && (has(x.others[0]) || ...)).
func exclusive(first string, others ...string) func(map[string]any) bool {
	return func(x map[string]any) bool { return !has(x, first) || !hasAny(others...)(x) }
}

func unchanged(field string) rule {
	return func(self, old any) []Path {
		return failIf(obj(self)[field] != obj(old)[field])
	}
}

// aliasOf returns the first amiSelectorTerms alias of an EC2NodeClass spec.
func aliasOf(spec map[string]any) (string, bool) {
	for _, t := range list(spec["amiSelectorTerms"]) {
		if a, ok := obj(t)["alias"].(string); ok {
			return a, true
		}
	}
	return "", false
}

func intIs(v any, want int64) bool {
	i, ok := asInt(v)
	return ok && i == want
}

// duplicatesBy fails at every element after the first that shares a key
// with an earlier one, among the elements key selects.
func duplicatesBy(items []any, key func(map[string]any) (string, bool)) []Path {
	seen := map[string]bool{}
	var bad []Path
	for i, x := range items {
		k, ok := key(obj(x))
		if !ok {
			continue
		}
		if seen[k] {
			bad = append(bad, Path{}.Index(i))
		}
		seen[k] = true
	}
	return bad
}

// keysCovered fails at each key of spec[from] that spec[in] lacks.
func keysCovered(spec map[string]any, from, in string) []Path {
	if !has(spec, from) {
		return nil
	}
	target := obj(spec[in])
	var bad []Path
	for _, k := range sortedKeys(obj(spec[from])) {
		if _, ok := target[k]; !ok || !has(spec, in) {
			bad = append(bad, Path{}.Child(from).Key(k))
		}
	}
	return bad
}
