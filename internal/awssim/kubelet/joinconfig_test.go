package kubelet

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const al2023 = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
echo user part

--//
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  cluster:
    apiServerEndpoint: https://127.0.0.1:6443
    certificateAuthority: Y2E=
    cidr: 10.100.0.0/16
    name: test-cluster
  kubelet:
    config:
      clusterDNS:
      - 10.100.0.10
      maxPods: 58
    flags:
    - --node-labels="karpenter.sh/capacity-type=spot,karpenter.sh/nodepool=default"
    - --register-with-taints="karpenter.sh/unregistered:NoExecute,dedicated=gpu:NoSchedule"

--//--
`

const al2 = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash -xe
exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1
/etc/eks/bootstrap.sh 'test-cluster' --apiserver-endpoint 'https://127.0.0.1:6443' --b64-cluster-ca 'Y2E=' \
--use-max-pods false \
--kubelet-extra-args '--node-labels="karpenter.sh/capacity-type=on-demand,karpenter.sh/nodepool=default" --register-with-taints="karpenter.sh/unregistered:NoExecute" --max-pods=29'
--//--
`

const bottlerocket = `[settings.kubernetes]
api-server = 'https://127.0.0.1:6443'
cluster-certificate = 'Y2E='
cluster-name = 'test-cluster'
max-pods = 17

[settings.kubernetes.node-labels]
'karpenter.sh/capacity-type' = 'on-demand'
"karpenter.sh/nodepool" = "default"

[settings.kubernetes.node-taints]
'karpenter.sh/unregistered' = [':NoExecute']
dedicated = ['gpu:NoSchedule']
`

func TestParseUserDataOfEachNodeImage(t *testing.T) {
	unregistered := corev1.Taint{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}
	gpu := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		name, userData string
		want           *JoinConfig
	}{
		{"al2023", al2023, &JoinConfig{Cluster: "test-cluster", MaxPods: 58,
			Labels: map[string]string{"karpenter.sh/capacity-type": "spot", "karpenter.sh/nodepool": "default"},
			Taints: []corev1.Taint{unregistered, gpu}}},
		{"al2", al2, &JoinConfig{Cluster: "test-cluster", MaxPods: 29,
			Labels: map[string]string{"karpenter.sh/capacity-type": "on-demand", "karpenter.sh/nodepool": "default"},
			Taints: []corev1.Taint{unregistered}}},
		{"bottlerocket", bottlerocket, &JoinConfig{Cluster: "test-cluster", MaxPods: 17,
			Labels: map[string]string{"karpenter.sh/capacity-type": "on-demand", "karpenter.sh/nodepool": "default"},
			Taints: []corev1.Taint{unregistered, gpu}}},
		{"empty", "", nil},
		{"plain script", "#!/bin/bash\necho no join\n", nil},
		{"bottlerocket without cluster", "[settings.host-containers.admin]\nenabled = true\n[settings.kubernetes.node-labels]\na = 'b'\n", nil},
		{"nodeconfig without cluster", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      maxPods: 10\n", nil},
	}
	for _, c := range cases {
		got, err := ParseUserData(c.userData)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
	if _, err := ParseUserData("/etc/eks/bootstrap.sh c --kubelet-extra-args '--register-with-taints=a=b:Sometimes'"); err == nil {
		t.Error("a taint with an unknown effect was accepted")
	}
}
