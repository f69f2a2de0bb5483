package eks

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Cluster is what registering a cluster needs: where its API server is and
// the network settings DescribeCluster reports. Karpenter discovers the
// endpoint, CA bundle and service CIDR this way.
type Cluster struct {
	Name                    string
	Endpoint                string // e.g. https://127.0.0.1:6443
	CertificateAuthorityPEM []byte // the API server's CA bundle
	Version                 string // Kubernetes minor version, e.g. "1.36"
	// IPFamily is "ipv4" (the default) or "ipv6". An IPv6 cluster assigns
	// services from ServiceIPv6CIDR and reports no IPv4 service CIDR.
	IPFamily               string
	ServiceIPv4CIDR        string // default 10.100.0.0/16 (IPv4 clusters)
	ServiceIPv6CIDR        string // default fd5e:9a41:77c3::/108 (IPv6 clusters)
	RoleARN                string // cluster IAM role; default eksClusterRole in the account
	VpcID                  string
	SubnetIDs              []string
	SecurityGroupIDs       []string
	ClusterSecurityGroupID string
	OIDCIssuer             string // default https://oidc.eks.<region>.amazonaws.com/id/<hex>
	AuthenticationMode     string // default API_AND_CONFIG_MAP
	Tags                   map[string]string
}

// cluster is a registered cluster with its access entries and associations.
// Fields are guarded by Service.mu.
type cluster struct {
	spec         Cluster
	arn          string
	created      time.Time
	tags         map[string]string
	accesses     map[string]*accessEntry            // by principal ARN
	associations map[string]*podIdentityAssociation // by association ID
}

// RegisterCluster adds a cluster in ACTIVE state, or updates the settings of
// one already registered, and returns its ARN.
func (s *Service) RegisterCluster(c Cluster) (string, error) {
	if c.Name == "" || c.Endpoint == "" || len(c.CertificateAuthorityPEM) == 0 {
		return "", fmt.Errorf("registering an EKS cluster needs a Name, an Endpoint and a CertificateAuthorityPEM")
	}
	// EKS reports the endpoint as a bare origin; a REST config's host may
	// end in a slash.
	c.Endpoint = strings.TrimRight(c.Endpoint, "/")
	switch c.IPFamily {
	case "", "ipv4":
		c.IPFamily = "ipv4"
		if c.ServiceIPv4CIDR == "" {
			c.ServiceIPv4CIDR = "10.100.0.0/16"
		}
	case "ipv6":
		// EKS picks an IPv6 service range from the unique local block
		// (fc00::/7); the cluster has no IPv4 service range.
		c.ServiceIPv4CIDR = ""
		if c.ServiceIPv6CIDR == "" {
			c.ServiceIPv6CIDR = "fd5e:9a41:77c3::/108"
		}
	default:
		return "", fmt.Errorf("registering an EKS cluster: IPFamily %q is not ipv4 or ipv6", c.IPFamily)
	}
	if c.RoleARN == "" {
		c.RoleARN = "arn:aws:iam::" + s.account + ":role/eksClusterRole"
	}
	if c.OIDCIssuer == "" {
		c.OIDCIssuer = "https://oidc.eks." + s.region + ".amazonaws.com/id/" + s.ids.Upper("", 32)
	}
	if c.AuthenticationMode == "" {
		c.AuthenticationMode = "API_AND_CONFIG_MAP"
	}
	arn := s.arn("cluster/" + c.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if existing := s.clusters[c.Name]; existing != nil {
		// Re-registering (a restarted API server) keeps access entries,
		// associations and tags.
		existing.spec = c
		return arn, nil
	}
	s.clusters[c.Name] = &cluster{
		spec:         c,
		arn:          arn,
		created:      s.now(),
		tags:         nonNilMap(maps.Clone(c.Tags)),
		accesses:     map[string]*accessEntry{},
		associations: map[string]*podIdentityAssociation{},
	}
	return arn, nil
}

// clusterArg returns the cluster named by the first path label. The caller
// holds s.mu.
func (s *Service) clusterArg(c *call) (*cluster, *restError) {
	name := c.Args[0]
	cl := s.clusters[name]
	if cl == nil {
		return nil, errNotFound("No cluster found for name: "+name+".", map[string]string{"clusterName": name})
	}
	return cl, nil
}

type clusterJSON struct {
	Name                    string            `json:"name"`
	Arn                     string            `json:"arn"`
	CreatedAt               float64           `json:"createdAt"`
	Version                 string            `json:"version,omitempty"`
	Endpoint                string            `json:"endpoint"`
	RoleArn                 string            `json:"roleArn"`
	ResourcesVpcConfig      vpcConfigJSON     `json:"resourcesVpcConfig"`
	KubernetesNetworkConfig networkConfigJSON `json:"kubernetesNetworkConfig"`
	Identity                identityJSON      `json:"identity"`
	Status                  string            `json:"status"`
	CertificateAuthority    struct {
		Data string `json:"data"`
	} `json:"certificateAuthority"`
	PlatformVersion string            `json:"platformVersion"`
	Tags            map[string]string `json:"tags"`
	AccessConfig    struct {
		AuthenticationMode string `json:"authenticationMode"`
	} `json:"accessConfig"`
}

type vpcConfigJSON struct {
	SubnetIDs              []string `json:"subnetIds"`
	SecurityGroupIDs       []string `json:"securityGroupIds"`
	ClusterSecurityGroupID string   `json:"clusterSecurityGroupId,omitempty"`
	VpcID                  string   `json:"vpcId,omitempty"`
	EndpointPublicAccess   bool     `json:"endpointPublicAccess"`
	EndpointPrivateAccess  bool     `json:"endpointPrivateAccess"`
	PublicAccessCidrs      []string `json:"publicAccessCidrs"`
}

type networkConfigJSON struct {
	ServiceIpv4Cidr string `json:"serviceIpv4Cidr,omitempty"`
	ServiceIpv6Cidr string `json:"serviceIpv6Cidr,omitempty"`
	IPFamily        string `json:"ipFamily"`
}

type identityJSON struct {
	OIDC struct {
		Issuer string `json:"issuer"`
	} `json:"oidc"`
}

func (cl *cluster) render() clusterJSON {
	x := clusterJSON{
		Name:      cl.spec.Name,
		Arn:       cl.arn,
		CreatedAt: epoch(cl.created),
		Version:   cl.spec.Version,
		Endpoint:  cl.spec.Endpoint,
		RoleArn:   cl.spec.RoleARN,
		ResourcesVpcConfig: vpcConfigJSON{
			SubnetIDs:              nonNil(cl.spec.SubnetIDs),
			SecurityGroupIDs:       nonNil(cl.spec.SecurityGroupIDs),
			ClusterSecurityGroupID: cl.spec.ClusterSecurityGroupID,
			VpcID:                  cl.spec.VpcID,
			EndpointPublicAccess:   true,
			PublicAccessCidrs:      []string{"0.0.0.0/0"},
		},
		KubernetesNetworkConfig: networkConfigJSON{ServiceIpv4Cidr: cl.spec.ServiceIPv4CIDR, ServiceIpv6Cidr: cl.spec.ServiceIPv6CIDR, IPFamily: cl.spec.IPFamily},
		Status:                  "ACTIVE",
		PlatformVersion:         "eks.1",
		Tags:                    maps.Clone(cl.tags),
	}
	x.Identity.OIDC.Issuer = cl.spec.OIDCIssuer
	x.CertificateAuthority.Data = base64.StdEncoding.EncodeToString(cl.spec.CertificateAuthorityPEM)
	x.AccessConfig.AuthenticationMode = cl.spec.AuthenticationMode
	return x
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func (s *Service) describeCluster(c *call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, err := s.clusterArg(c)
	if err != nil {
		return nil, err
	}
	return struct {
		Cluster clusterJSON `json:"cluster"`
	}{cl.render()}, nil
}

func (s *Service) listClusters(*call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return struct {
		Clusters []string `json:"clusters"`
	}{slices.Sorted(maps.Keys(s.clusters))}, nil
}

// deleteCluster removes a cluster with its access entries and pod identity
// associations, as EKS does once the deletion it starts completes; the
// answer shows the cluster DELETING.
func (s *Service) deleteCluster(c *call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, err := s.clusterArg(c)
	if err != nil {
		return nil, err
	}
	delete(s.clusters, cl.spec.Name)
	out := cl.render()
	out.Status = "DELETING"
	return struct {
		Cluster clusterJSON `json:"cluster"`
	}{out}, nil
}
