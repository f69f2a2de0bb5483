package eks_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/clienttest"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/eks"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/iam"
)

const (
	account = "111122223333"
	caPEM   = "-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n"
	trust   = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
)

type world struct {
	eks     *awseks.Client
	iam     *awsiam.Client
	service *eks.Service
}

func newWorld(t *testing.T) world {
	t.Helper()
	roles := iam.New(account)
	svc := eks.New(account, clienttest.Region, roles)
	if _, err := svc.RegisterCluster(eks.Cluster{
		Name:                    "demo",
		Endpoint:                "https://127.0.0.1:6443",
		CertificateAuthorityPEM: []byte(caPEM),
		Version:                 "1.36",
		ServiceIPv4CIDR:         "10.96.0.0/12",
		SubnetIDs:               []string{"subnet-0a", "subnet-0b"},
	}); err != nil {
		t.Fatal(err)
	}
	return world{
		eks:     awseks.NewFromConfig(clienttest.Config(t, svc)),
		iam:     awsiam.NewFromConfig(clienttest.Config(t, roles)),
		service: svc,
	}
}

func (w world) role(t *testing.T, name string) string {
	t.Helper()
	out, err := w.iam.CreateRole(context.Background(), &awsiam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(trust)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.Role.Arn)
}

func TestDescribeCluster(t *testing.T) {
	w := newWorld(t)
	out, err := w.eks.DescribeCluster(context.Background(), &awseks.DescribeClusterInput{Name: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	c := out.Cluster
	if aws.ToString(c.Arn) != "arn:aws:eks:"+clienttest.Region+":"+account+":cluster/demo" ||
		aws.ToString(c.Endpoint) != "https://127.0.0.1:6443" || aws.ToString(c.Version) != "1.36" ||
		c.Status != types.ClusterStatusActive || c.CreatedAt == nil {
		t.Fatalf("cluster = %+v", c)
	}
	ca, err := base64.StdEncoding.DecodeString(aws.ToString(c.CertificateAuthority.Data))
	if err != nil || string(ca) != caPEM {
		t.Fatalf("certificateAuthority.data does not decode to the registered CA: %q, %v", ca, err)
	}
	if aws.ToString(c.KubernetesNetworkConfig.ServiceIpv4Cidr) != "10.96.0.0/12" || c.KubernetesNetworkConfig.IpFamily != types.IpFamilyIpv4 {
		t.Fatalf("kubernetesNetworkConfig = %+v", c.KubernetesNetworkConfig)
	}
	if len(c.ResourcesVpcConfig.SubnetIds) != 2 || c.AccessConfig.AuthenticationMode != types.AuthenticationModeApiAndConfigMap ||
		aws.ToString(c.Identity.Oidc.Issuer) == "" {
		t.Fatalf("cluster config = %+v %+v %+v", c.ResourcesVpcConfig, c.AccessConfig, c.Identity)
	}

	_, err = w.eks.DescribeCluster(context.Background(), &awseks.DescribeClusterInput{Name: aws.String("absent")})
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) || aws.ToString(notFound.ClusterName) != "absent" {
		t.Fatalf("DescribeCluster absent error = %v", err)
	}
}

func TestAccessEntries(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	node := w.role(t, "KarpenterNodeRole-demo")
	admin := w.role(t, "admin")
	cluster := aws.String("demo")

	created, err := w.eks.CreateAccessEntry(ctx, &awseks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(node), Type: aws.String("EC2_LINUX"), Tags: map[string]string{"owner": "joist"}})
	if err != nil {
		t.Fatal(err)
	}
	e := created.AccessEntry
	if aws.ToString(e.Username) != "system:node:{{EC2PrivateDNSName}}" || len(e.KubernetesGroups) != 1 || e.KubernetesGroups[0] != "system:nodes" || aws.ToString(e.Type) != "EC2_LINUX" {
		t.Fatalf("EC2_LINUX entry = %+v", e)
	}
	if _, err := w.eks.CreateAccessEntry(ctx, &awseks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(admin), KubernetesGroups: []string{"admins"}}); err != nil {
		t.Fatal(err)
	}

	_, err = w.eks.CreateAccessEntry(ctx, &awseks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(node), Type: aws.String("EC2_LINUX")})
	var inUse *types.ResourceInUseException
	if !errors.As(err, &inUse) {
		t.Fatalf("duplicate access entry error = %v", err)
	}
	_, err = w.eks.CreateAccessEntry(ctx, &awseks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::" + account + ":role/no-such-role")})
	var invalid *types.InvalidParameterException
	if !errors.As(err, &invalid) {
		t.Fatalf("access entry for a missing role error = %v", err)
	}

	got, err := w.eks.DescribeAccessEntry(ctx, &awseks.DescribeAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(admin)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(got.AccessEntry.Username) != "arn:aws:sts::"+account+":assumed-role/admin/{{SessionName}}" || got.AccessEntry.KubernetesGroups[0] != "admins" {
		t.Fatalf("STANDARD entry = %+v", got.AccessEntry)
	}
	list, err := w.eks.ListAccessEntries(ctx, &awseks.ListAccessEntriesInput{ClusterName: cluster})
	if err != nil || len(list.AccessEntries) != 2 {
		t.Fatalf("ListAccessEntries = %+v, %v", list, err)
	}

	tagged, err := w.eks.ListTagsForResource(ctx, &awseks.ListTagsForResourceInput{ResourceArn: e.AccessEntryArn})
	if err != nil || tagged.Tags["owner"] != "joist" {
		t.Fatalf("access entry tags = %+v, %v", tagged, err)
	}

	if _, err := w.eks.DeleteAccessEntry(ctx, &awseks.DeleteAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(node)}); err != nil {
		t.Fatal(err)
	}
	_, err = w.eks.DescribeAccessEntry(ctx, &awseks.DescribeAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(node)})
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Fatalf("DescribeAccessEntry after delete error = %v", err)
	}
}

func TestPodIdentityAssociations(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	controller := w.role(t, "KarpenterControllerRole-demo")
	cluster := aws.String("demo")

	created, err := w.eks.CreatePodIdentityAssociation(ctx, &awseks.CreatePodIdentityAssociationInput{
		ClusterName: cluster, Namespace: aws.String("kube-system"), ServiceAccount: aws.String("karpenter"), RoleArn: aws.String(controller),
	})
	if err != nil {
		t.Fatal(err)
	}
	a := created.Association
	id := aws.ToString(a.AssociationId)
	if len(id) != 19 || id[:2] != "a-" || aws.ToString(a.AssociationArn) != "arn:aws:eks:"+clienttest.Region+":"+account+":podidentityassociation/demo/"+id {
		t.Fatalf("association = %+v", a)
	}
	_, err = w.eks.CreatePodIdentityAssociation(ctx, &awseks.CreatePodIdentityAssociationInput{
		ClusterName: cluster, Namespace: aws.String("kube-system"), ServiceAccount: aws.String("karpenter"), RoleArn: aws.String(controller),
	})
	if code := clienttest.ErrorCode(t, err); code != "ResourceInUseException" {
		t.Fatalf("duplicate association code = %s", code)
	}
	got, err := w.eks.DescribePodIdentityAssociation(ctx, &awseks.DescribePodIdentityAssociationInput{ClusterName: cluster, AssociationId: aws.String(id)})
	if err != nil || aws.ToString(got.Association.RoleArn) != controller || aws.ToString(got.Association.ServiceAccount) != "karpenter" {
		t.Fatalf("DescribePodIdentityAssociation = %+v, %v", got, err)
	}
	list, err := w.eks.ListPodIdentityAssociations(ctx, &awseks.ListPodIdentityAssociationsInput{ClusterName: cluster, Namespace: aws.String("kube-system")})
	if err != nil || len(list.Associations) != 1 || aws.ToString(list.Associations[0].AssociationId) != id {
		t.Fatalf("ListPodIdentityAssociations = %+v, %v", list, err)
	}
	none, err := w.eks.ListPodIdentityAssociations(ctx, &awseks.ListPodIdentityAssociationsInput{ClusterName: cluster, Namespace: aws.String("default")})
	if err != nil || len(none.Associations) != 0 {
		t.Fatalf("namespace filter = %+v, %v", none, err)
	}
	if _, err := w.eks.DeletePodIdentityAssociation(ctx, &awseks.DeletePodIdentityAssociationInput{ClusterName: cluster, AssociationId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	_, err = w.eks.DescribePodIdentityAssociation(ctx, &awseks.DescribePodIdentityAssociationInput{ClusterName: cluster, AssociationId: aws.String(id)})
	if code := clienttest.ErrorCode(t, err); code != "ResourceNotFoundException" {
		t.Fatalf("DescribePodIdentityAssociation after delete code = %s", code)
	}
}

func TestClusterTags(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	arn := aws.String("arn:aws:eks:" + clienttest.Region + ":" + account + ":cluster/demo")
	if _, err := w.eks.TagResource(ctx, &awseks.TagResourceInput{ResourceArn: arn, Tags: map[string]string{"a": "1", "b": "2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.eks.UntagResource(ctx, &awseks.UntagResourceInput{ResourceArn: arn, TagKeys: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	out, err := w.eks.ListTagsForResource(ctx, &awseks.ListTagsForResourceInput{ResourceArn: arn})
	if err != nil || len(out.Tags) != 1 || out.Tags["b"] != "2" {
		t.Fatalf("cluster tags = %+v, %v", out, err)
	}
	_, err = w.eks.TagResource(ctx, &awseks.TagResourceInput{ResourceArn: aws.String("arn:aws:eks:" + clienttest.Region + ":" + account + ":cluster/absent"), Tags: map[string]string{"a": "1"}})
	if code := clienttest.ErrorCode(t, err); code != "NotFoundException" {
		t.Fatalf("tagging a missing cluster code = %s", code)
	}
}

func TestReregisterKeepsAccessEntries(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	node := w.role(t, "node")
	if _, err := w.eks.CreateAccessEntry(ctx, &awseks.CreateAccessEntryInput{ClusterName: aws.String("demo"), PrincipalArn: aws.String(node), Type: aws.String("EC2_LINUX")}); err != nil {
		t.Fatal(err)
	}
	// A REST config's host may end in a slash; EKS reports a bare origin.
	if _, err := w.service.RegisterCluster(eks.Cluster{Name: "demo", Endpoint: "https://127.0.0.1:7443/", CertificateAuthorityPEM: []byte(caPEM)}); err != nil {
		t.Fatal(err)
	}
	out, err := w.eks.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.Cluster.Endpoint); got != "https://127.0.0.1:7443" {
		t.Fatalf("endpoint after re-registering = %q, want it without the trailing slash", got)
	}
	list, err := w.eks.ListAccessEntries(ctx, &awseks.ListAccessEntriesInput{ClusterName: aws.String("demo")})
	if err != nil || len(list.AccessEntries) != 1 {
		t.Fatalf("access entries after re-registering = %v, %v", list, err)
	}
	if _, err := w.service.RegisterCluster(eks.Cluster{Name: "bad"}); err == nil {
		t.Fatal("RegisterCluster without an endpoint and CA succeeded")
	}
}

func TestDeleteCluster(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	role := w.role(t, "nodes")
	if _, err := w.eks.CreateAccessEntry(ctx, &awseks.CreateAccessEntryInput{ClusterName: aws.String("demo"), PrincipalArn: aws.String(role), Type: aws.String("EC2_LINUX")}); err != nil {
		t.Fatal(err)
	}
	out, err := w.eks.DeleteCluster(ctx, &awseks.DeleteClusterInput{Name: aws.String("demo")})
	if err != nil || out.Cluster.Status != types.ClusterStatusDeleting {
		t.Fatalf("DeleteCluster = %+v, %v", out, err)
	}
	var notFound *types.ResourceNotFoundException
	_, err = w.eks.DescribeAccessEntry(ctx, &awseks.DescribeAccessEntryInput{ClusterName: aws.String("demo"), PrincipalArn: aws.String(role)})
	if !errors.As(err, &notFound) {
		t.Fatalf("an access entry of a deleted cluster: %v, want ResourceNotFoundException", err)
	}
	if _, err = w.eks.DeleteCluster(ctx, &awseks.DeleteClusterInput{Name: aws.String("demo")}); !errors.As(err, &notFound) {
		t.Fatalf("deleting a deleted cluster: %v, want ResourceNotFoundException", err)
	}
}

func TestDescribeClusterReportsTheIPFamily(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	if _, err := w.service.RegisterCluster(eks.Cluster{Name: "six", Endpoint: "https://127.0.0.1:7443", CertificateAuthorityPEM: []byte(caPEM), IPFamily: "ipv6"}); err != nil {
		t.Fatal(err)
	}
	out, err := w.eks.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String("six")})
	if err != nil {
		t.Fatal(err)
	}
	n := out.Cluster.KubernetesNetworkConfig
	if n.IpFamily != "ipv6" || aws.ToString(n.ServiceIpv6Cidr) != "fd5e:9a41:77c3::/108" || n.ServiceIpv4Cidr != nil {
		t.Fatalf("IPv6 cluster network = family %q, v6 %v, v4 %v; want ipv6, fd5e:9a41:77c3::/108 and no IPv4 range", n.IpFamily, aws.ToString(n.ServiceIpv6Cidr), aws.ToString(n.ServiceIpv4Cidr))
	}
	out, err = w.eks.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	n = out.Cluster.KubernetesNetworkConfig
	if n.IpFamily != "ipv4" || aws.ToString(n.ServiceIpv4Cidr) == "" || n.ServiceIpv6Cidr != nil {
		t.Fatalf("IPv4 cluster network = family %q, v4 %v, v6 %v", n.IpFamily, aws.ToString(n.ServiceIpv4Cidr), aws.ToString(n.ServiceIpv6Cidr))
	}
	if _, err := w.service.RegisterCluster(eks.Cluster{Name: "bad", Endpoint: "https://127.0.0.1:7443", CertificateAuthorityPEM: []byte(caPEM), IPFamily: "dual"}); err == nil {
		t.Fatal("RegisterCluster with IPFamily dual succeeded")
	}
}
