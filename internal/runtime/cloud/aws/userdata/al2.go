package userdata

import (
	"fmt"
	"strings"
)

// AL2 renders the node class's parts followed by a shell part that calls
// /etc/eks/bootstrap.sh with the cluster and kubelet settings.
func AL2(o Options) (string, error) {
	parts, err := customParts(o.Custom, ContentTypeShell)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash -xe\n")
	b.WriteString("exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n")
	fmt.Fprintf(&b, "/etc/eks/bootstrap.sh %s --apiserver-endpoint %s", shellQuote(o.ClusterName), shellQuote(o.ClusterEndpoint))
	if o.CABundle != "" {
		fmt.Fprintf(&b, " --b64-cluster-ca %s", shellQuote(o.CABundle))
	}
	if o.IPv6 {
		// bootstrap.sh refuses --ip-family ipv6 without the service range
		// when it is given the endpoint and CA.
		b.WriteString(" \\\n--ip-family ipv6")
		if o.ClusterCIDR != "" {
			fmt.Fprintf(&b, " \\\n--service-ipv6-cidr %s", shellQuote(o.ClusterCIDR))
		}
	}
	if dns := o.Kubelet.MustSettings().ClusterDNS; len(dns) > 0 {
		fmt.Fprintf(&b, " \\\n--dns-cluster-ip %s", shellQuote(dns[0]))
	}
	b.WriteString(" \\\n--use-max-pods false")
	if o.RAID0 {
		b.WriteString(" \\\n--local-disks raid0")
	}
	if args := kubeletArgs(o); len(args) > 0 {
		fmt.Fprintf(&b, " \\\n--kubelet-extra-args %s", shellQuote(strings.Join(args, " ")))
	}
	b.WriteString("\n")
	return WriteMIME(append(parts, Part{ContentType: ContentTypeShell, Body: b.String()})), nil
}

// shellQuote single-quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
