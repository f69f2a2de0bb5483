package userdata

import (
	"fmt"
	"strings"
)

// Windows renders the node class's PowerShell followed by the EKS bootstrap
// script call, inside one <powershell> block.
func Windows(o Options) string {
	var b strings.Builder
	b.WriteString("<powershell>\n")
	if o.Custom != nil {
		custom := strings.TrimSpace(*o.Custom)
		custom = strings.TrimPrefix(custom, "<powershell>")
		custom = strings.TrimSuffix(custom, "</powershell>")
		if custom = strings.TrimSpace(custom); custom != "" {
			b.WriteString(custom + "\n")
		}
	}
	fmt.Fprintf(&b, "[string]$EKSBootstrapScriptFile = \"$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1\"\n")
	fmt.Fprintf(&b, "& $EKSBootstrapScriptFile -EKSClusterName '%s' -APIServerEndpoint '%s'", o.ClusterName, o.ClusterEndpoint)
	if o.CABundle != "" {
		fmt.Fprintf(&b, " -Base64ClusterCA '%s'", o.CABundle)
	}
	if args := kubeletArgs(o); len(args) > 0 {
		fmt.Fprintf(&b, " -KubeletExtraArgs '%s'", strings.Join(args, " "))
	}
	if dns := o.Kubelet.MustSettings().ClusterDNS; len(dns) > 0 {
		fmt.Fprintf(&b, " -DNSClusterIP '%s'", dns[0])
	}
	b.WriteString("\n</powershell>\n")
	return b.String()
}
