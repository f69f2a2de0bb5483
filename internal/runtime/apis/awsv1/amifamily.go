package awsv1

import (
	"strings"
)

// AMI families (spec.amiFamily values).
const (
	AMIFamilyAL2          = "AL2"
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyCustom       = "Custom"
	AMIFamilyWindows2019  = "Windows2019"
	AMIFamilyWindows2022  = "Windows2022"
	AMIFamilyWindows2025  = "Windows2025"
)

// AliasFamilies are the families an amiSelectorTerms alias may name.
var AliasFamilies = []string{
	AMIFamilyAL2, AMIFamilyAL2023, AMIFamilyBottlerocket,
	AMIFamilyWindows2019, AMIFamilyWindows2022, AMIFamilyWindows2025,
}

// FamilyRunsOn reports whether family's images run on instanceType:
// AL2023 does not support a1 (first-generation Graviton) types, which
// Karpenter leaves out for that family.
func FamilyRunsOn(family, instanceType string) bool {
	return family != AMIFamilyAL2023 || !strings.HasPrefix(instanceType, "a1.")
}

// AliasVersionLatest is the alias version that follows every new release.
const AliasVersionLatest = "latest"

// Alias is a parsed amiSelectorTerms alias such as "al2023@latest".
type Alias struct {
	// Family as spec.amiFamily spells it ("AL2023").
	Family string
	// Version: "latest" or a release tag.
	Version string
}

// String returns the alias as written in a manifest ("al2023@latest").
func (a Alias) String() string { return strings.ToLower(a.Family) + "@" + a.Version }

// ParseAlias reads "family@version"; ok is false when the family is unknown
// or the text is not of that form (the CRD rejects both).
func ParseAlias(alias string) (Alias, bool) {
	family, version, found := strings.Cut(alias, "@")
	if !found || version == "" {
		return Alias{}, false
	}
	for _, f := range AliasFamilies {
		if strings.ToLower(f) == family {
			return Alias{Family: f, Version: version}, true
		}
	}
	return Alias{}, false
}

// Alias returns the node class's alias term, if it has one.
func (in *EC2NodeClass) Alias() (Alias, bool) {
	for _, term := range in.Spec.AMISelectorTerms {
		if term.Alias != "" {
			return ParseAlias(term.Alias)
		}
	}
	return Alias{}, false
}

// AMIFamily is the family in effect: spec.amiFamily if set, else the alias's
// family. The CRD requires one of them; Custom is returned if neither is set.
func (in *EC2NodeClass) AMIFamily() string {
	if in.Spec.AMIFamily != nil {
		return *in.Spec.AMIFamily
	}
	if alias, ok := in.Alias(); ok {
		return alias.Family
	}
	return AMIFamilyCustom
}
