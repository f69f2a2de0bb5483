package awsv1

import "k8s.io/apimachinery/pkg/api/resource"

// BlockDeviceMapping attaches a volume to launched instances.
type BlockDeviceMapping struct {
	// DeviceName, such as /dev/xvda.
	// +optional
	DeviceName *string `json:"deviceName,omitempty"`
	// EBS volume settings.
	// +kubebuilder:validation:XValidation:message="snapshotID or volumeSize must be defined",rule="has(self.snapshotID) || has(self.volumeSize)"
	// +kubebuilder:validation:XValidation:message="snapshotID must be set when volumeInitializationRate is set",rule="!has(self.volumeInitializationRate) || (has(self.snapshotID) && self.snapshotID != '')"
	// +optional
	EBS *BlockDevice `json:"ebs,omitempty"`
	// RootVolume marks the volume holding the kubelet root directory; its size
	// is the node's ephemeral-storage. At most one mapping may set it.
	// +optional
	RootVolume bool `json:"rootVolume,omitempty"`
}

// BlockDevice is an EBS volume.
type BlockDevice struct {
	// DeleteOnTermination deletes the volume with the instance.
	// +optional
	DeleteOnTermination *bool `json:"deleteOnTermination,omitempty"`
	// Encrypted volume.
	// +optional
	Encrypted *bool `json:"encrypted,omitempty"`
	// IOPS provisioned (io1, io2, gp3).
	// +optional
	IOPS *int64 `json:"iops,omitempty"`
	// KMSKeyID encrypting the volume (key ID, alias or ARN).
	// +optional
	KMSKeyID *string `json:"kmsKeyID,omitempty"`
	// SnapshotID to create the volume from.
	// +optional
	SnapshotID *string `json:"snapshotID,omitempty"`
	// Throughput in MiB/s for gp3 volumes; EC2 checks the range.
	// +optional
	Throughput *int64 `json:"throughput,omitempty"`
	// VolumeInitializationRate in MiB/s (100 to 300) for volumes created from a snapshot.
	// +kubebuilder:validation:Minimum:=100
	// +kubebuilder:validation:Maximum:=300
	// +optional
	VolumeInitializationRate *int32 `json:"volumeInitializationRate,omitempty"`
	// VolumeSize in Gi, G, Ti or T (up to 64T).
	// +kubebuilder:validation:Pattern:="^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$"
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type:=string
	// +optional
	VolumeSize *resource.Quantity `json:"volumeSize,omitempty" hash:"string"`
	// VolumeType: standard, io1, io2, gp2, sc1, st1 or gp3.
	// +kubebuilder:validation:Enum:={standard,io1,io2,gp2,sc1,st1,gp3}
	// +optional
	VolumeType *string `json:"volumeType,omitempty"`
}

// InstanceStorePolicy says how local NVMe instance-store disks are used.
// +kubebuilder:validation:Enum={RAID0}
type InstanceStorePolicy string

// InstanceStorePolicyRAID0 stripes all instance-store disks into one array
// used for kubelet and container storage.
const InstanceStorePolicyRAID0 InstanceStorePolicy = "RAID0"

// MetadataOptions configure the instance metadata service.
type MetadataOptions struct {
	// HTTPEndpoint enables or disables the metadata endpoint.
	// +kubebuilder:default=enabled
	// +kubebuilder:validation:Enum:={enabled,disabled}
	// +optional
	HTTPEndpoint *string `json:"httpEndpoint,omitempty"`
	// HTTPProtocolIPv6 enables or disables the IPv6 metadata endpoint.
	// +kubebuilder:default=disabled
	// +kubebuilder:validation:Enum:={enabled,disabled}
	// +optional
	HTTPProtocolIPv6 *string `json:"httpProtocolIPv6,omitempty"`
	// HTTPPutResponseHopLimit (1 to 64); 1 keeps non-hostNetwork pods from
	// reaching the node's credentials.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum:=1
	// +kubebuilder:validation:Maximum:=64
	// +optional
	HTTPPutResponseHopLimit *int64 `json:"httpPutResponseHopLimit,omitempty"`
	// HTTPTokens: "required" (IMDSv2 only) or "optional".
	// +kubebuilder:default=required
	// +kubebuilder:validation:Enum:={required,optional}
	// +optional
	HTTPTokens *string `json:"httpTokens,omitempty"`
}
