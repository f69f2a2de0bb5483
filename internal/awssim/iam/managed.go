package iam

import "time"

// awsManagedPolicies are the AWS managed policies an EKS node role (and the
// Karpenter getting-started setup) attaches, with the actions they grant, so
// attaching them by ARN works as it does in a real account.
var awsManagedPolicies = []struct {
	name, path, description, document string
}{
	{"AmazonEKSWorkerNodePolicy", "/", "This policy allows Amazon EKS worker nodes to connect to Amazon EKS Clusters.",
		`{"Version":"2012-10-17","Statement":[{"Sid":"WorkerNodePermissions","Effect":"Allow","Action":["ec2:DescribeInstances","ec2:DescribeInstanceTypes","ec2:DescribeRouteTables","ec2:DescribeSecurityGroups","ec2:DescribeSubnets","ec2:DescribeVolumes","ec2:DescribeVolumesModifications","ec2:DescribeVpcs","eks:DescribeCluster","eks-auth:AssumeRoleForPodIdentity"],"Resource":"*"}]}`},
	{"AmazonEKS_CNI_Policy", "/", "This policy provides the Amazon VPC CNI Plugin (amazon-vpc-cni-k8s) the permissions it requires to modify the IP address configuration on your EKS worker nodes.",
		`{"Version":"2012-10-17","Statement":[{"Sid":"AmazonEKSCNIPolicy","Effect":"Allow","Action":["ec2:AssignPrivateIpAddresses","ec2:AttachNetworkInterface","ec2:CreateNetworkInterface","ec2:DeleteNetworkInterface","ec2:DescribeInstances","ec2:DescribeTags","ec2:DescribeNetworkInterfaces","ec2:DescribeInstanceTypes","ec2:DescribeSubnets","ec2:DetachNetworkInterface","ec2:ModifyNetworkInterfaceAttribute","ec2:UnassignPrivateIpAddresses"],"Resource":"*"},{"Sid":"AmazonEKSCNIPolicyENITag","Effect":"Allow","Action":["ec2:CreateTags"],"Resource":["arn:aws:ec2:*:*:network-interface/*"]}]}`},
	{"AmazonEC2ContainerRegistryReadOnly", "/", "Provides read-only access to Amazon EC2 Container Registry repositories.",
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ecr:GetAuthorizationToken","ecr:BatchCheckLayerAvailability","ecr:GetDownloadUrlForLayer","ecr:GetRepositoryPolicy","ecr:DescribeRepositories","ecr:ListImages","ecr:DescribeImages","ecr:BatchGetImage","ecr:GetLifecyclePolicy","ecr:GetLifecyclePolicyPreview","ecr:ListTagsForResource","ecr:DescribeImageScanFindings"],"Resource":"*"}]}`},
	{"AmazonEC2ContainerRegistryPullOnly", "/", "Provides permissions to pull images from Amazon ECR repositories.",
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ecr:GetAuthorizationToken","ecr:BatchGetImage","ecr:GetDownloadUrlForLayer","ecr:BatchImportUpstreamImage"],"Resource":"*"}]}`},
	{"AmazonSSMManagedInstanceCore", "/", "The policy for Amazon EC2 Role to enable AWS Systems Manager service core functionality.",
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["ssm:DescribeAssociation","ssm:GetDeployablePatchSnapshotForInstance","ssm:GetDocument","ssm:DescribeDocument","ssm:GetManifest","ssm:GetParameter","ssm:GetParameters","ssm:ListAssociations","ssm:ListInstanceAssociations","ssm:PutInventory","ssm:PutComplianceItems","ssm:PutConfigurePackageResult","ssm:UpdateAssociationStatus","ssm:UpdateInstanceAssociationStatus","ssm:UpdateInstanceInformation"],"Resource":"*"},{"Effect":"Allow","Action":["ssmmessages:CreateControlChannel","ssmmessages:CreateDataChannel","ssmmessages:OpenControlChannel","ssmmessages:OpenDataChannel"],"Resource":"*"},{"Effect":"Allow","Action":["ec2messages:AcknowledgeMessage","ec2messages:DeleteMessage","ec2messages:FailMessage","ec2messages:GetEndpoint","ec2messages:GetMessages","ec2messages:SendReply"],"Resource":"*"}]}`},
	{"AmazonEKSClusterPolicy", "/", "This policy provides Kubernetes the permissions it requires to manage resources on your behalf.",
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["autoscaling:DescribeAutoScalingGroups","ec2:DescribeInstances","ec2:DescribeSubnets","ec2:DescribeVpcs","elasticloadbalancing:DescribeLoadBalancers","kms:DescribeKey"],"Resource":"*"}]}`},
}

// seedManagedPolicies creates the AWS managed policies.
func (s *Service) seedManagedPolicies() {
	created := time.Date(2018, 5, 27, 21, 9, 1, 0, time.UTC)
	for _, m := range awsManagedPolicies {
		arn := "arn:aws:iam::aws:policy" + m.path + m.name
		s.policies[arn] = &managedPolicy{
			name:        m.name,
			id:          s.ids.Upper("ANPA", 21),
			arn:         arn,
			path:        m.path,
			description: m.description,
			created:     created,
			updated:     created,
			versions:    []*policyVersion{{id: "v1", document: m.document, created: created}},
			defaultID:   "v1",
			nextVersion: 2,
			awsManaged:  true,
		}
	}
}
