package catalog

import "sort"

// Zone is an availability zone: its account-specific name and its stable ID.
type Zone struct {
	Name string
	ID   string
}

// Region is an AWS region with its availability zones, in name order.
type Region struct {
	Name  string
	Zones []Zone
}

// DefaultRegion is the region the simulator serves unless told otherwise.
const DefaultRegion = "us-west-2"

// The zone name to zone ID mapping is the one the offering data was recorded with.
var regions = map[string]Region{
	"us-west-2": {Name: "us-west-2", Zones: []Zone{
		{"us-west-2a", "usw2-az2"}, {"us-west-2b", "usw2-az1"}, {"us-west-2c", "usw2-az3"}, {"us-west-2d", "usw2-az4"},
	}},
	"us-east-1": {Name: "us-east-1", Zones: []Zone{
		{"us-east-1a", "use1-az2"}, {"us-east-1b", "use1-az4"}, {"us-east-1c", "use1-az6"},
		{"us-east-1d", "use1-az1"}, {"us-east-1e", "use1-az3"}, {"us-east-1f", "use1-az5"},
	}},
}

// LookupRegion returns a region the catalog has data for.
func LookupRegion(name string) (Region, bool) {
	r, ok := regions[name]
	return r, ok
}

// RegionNames lists the regions the catalog has data for.
func RegionNames() []string {
	out := make([]string, 0, len(regions))
	for n := range regions {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
