package provider

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// applyPodIdentity creates, replaces or deletes the pod identity association.
func (r *ControllerIAMRoleResource) applyPodIdentity(ctx context.Context, c *eks.Client, m, prior *controllerIAMRoleModel, roleARN string, diags *diag.Diagnostics) {
	cluster := r.clusterName(m.ClusterName)
	want := m.podIdentity() && m.CreatePodIdentity.ValueBool()
	existing := ""
	if prior != nil {
		existing = prior.PodIdentityAssociationID.ValueString()
	}
	if existing != "" {
		d, err := c.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String(cluster), AssociationId: aws.String(existing)})
		switch {
		case isAWSCode(err, "ResourceNotFoundException"):
			existing = ""
		case err != nil:
			diags.AddError("Reading the pod identity association", err.Error())
			return
		case !want || aws.ToString(d.Association.Namespace) != m.Namespace.ValueString() || aws.ToString(d.Association.ServiceAccount) != m.ServiceAccount.ValueString():
			// Namespace and service account are immutable: replace.
			if _, err := c.DeletePodIdentityAssociation(ctx, &eks.DeletePodIdentityAssociationInput{ClusterName: aws.String(cluster), AssociationId: aws.String(existing)}); err != nil && !isAWSCode(err, "ResourceNotFoundException") {
				diags.AddError("Deleting the pod identity association", err.Error())
				return
			}
			existing = ""
		case aws.ToString(d.Association.RoleArn) != roleARN:
			if _, err := c.UpdatePodIdentityAssociation(ctx, &eks.UpdatePodIdentityAssociationInput{ClusterName: aws.String(cluster), AssociationId: aws.String(existing), RoleArn: aws.String(roleARN)}); err != nil {
				diags.AddError("Updating the pod identity association", err.Error())
				return
			}
		}
	}
	m.PodIdentityAssociationID = types.StringValue(existing)
	if !want || existing != "" {
		return
	}
	out, err := c.CreatePodIdentityAssociation(ctx, &eks.CreatePodIdentityAssociationInput{
		ClusterName: aws.String(cluster), Namespace: aws.String(m.Namespace.ValueString()),
		ServiceAccount: aws.String(m.ServiceAccount.ValueString()), RoleArn: aws.String(roleARN),
	})
	if err != nil {
		diags.AddAttributeError(path.Root("create_pod_identity_association"), "Creating the pod identity association",
			fmt.Sprintf("eks:CreatePodIdentityAssociation in cluster %s for %s/%s: %v (is the EKS Pod Identity Agent add-on installed, or use oidc_provider_arn for IRSA?)",
				cluster, m.Namespace.ValueString(), m.ServiceAccount.ValueString(), err))
		return
	}
	m.PodIdentityAssociationID = types.StringValue(aws.ToString(out.Association.AssociationId))
}

// readPodIdentity finds the association of the ServiceAccount with the role.
func (r *ControllerIAMRoleResource) readPodIdentity(ctx context.Context, c *eks.Client, m *controllerIAMRoleModel, roleARN string, diags *diag.Diagnostics) {
	cluster := r.clusterName(m.ClusterName)
	out, err := c.ListPodIdentityAssociations(ctx, &eks.ListPodIdentityAssociationsInput{
		ClusterName: aws.String(cluster), Namespace: aws.String(m.Namespace.ValueString()), ServiceAccount: aws.String(m.ServiceAccount.ValueString()),
	})
	if isAWSCode(err, "ResourceNotFoundException") {
		return
	}
	if err != nil {
		diags.AddError("Reading the pod identity association", fmt.Sprintf("eks:ListPodIdentityAssociations in cluster %s: %v", cluster, err))
		return
	}
	for _, a := range out.Associations {
		d, err := c.DescribePodIdentityAssociation(ctx, &eks.DescribePodIdentityAssociationInput{ClusterName: aws.String(cluster), AssociationId: a.AssociationId})
		if err != nil {
			continue
		}
		if aws.ToString(d.Association.RoleArn) == roleARN {
			m.PodIdentityAssociationID = types.StringValue(aws.ToString(a.AssociationId))
			if m.CreatePodIdentity.IsNull() {
				m.CreatePodIdentity = types.BoolValue(true)
			}
			return
		}
	}
	if m.CreatePodIdentity.IsNull() {
		m.CreatePodIdentity = types.BoolValue(false)
	}
}
