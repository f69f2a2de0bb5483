package kubelet

import (
	"fmt"
	"regexp"
	"strings"
)

// windowsBuilds are the node.kubernetes.io/windows-build values kubelet
// reports on the EKS-optimized Windows Server Core images.
var windowsBuilds = map[string]string{
	"windows2019": "10.0.17763",
	"windows2022": "10.0.20348",
	"windows2025": "10.0.26100",
}

// WindowsBuild is the build of a Windows image family, "" for other families.
func WindowsBuild(family string) string { return windowsBuilds[family] }

// psParameter is one `-Name 'value'` of a PowerShell call; ” escapes a quote.
var psParameter = regexp.MustCompile(`-(\w+)\s+'((?:[^']|'')*)'`)

// parseWindowsBootstrap reads the Start-EKSBootstrap.ps1 call of a Windows
// node's <powershell> user data: -EKSClusterName and -KubeletExtraArgs.
func parseWindowsBootstrap(script string) (*JoinConfig, error) {
	for _, line := range strings.Split(script, "\n") {
		if !strings.Contains(line, "-EKSClusterName") {
			continue
		}
		params := map[string]string{}
		for _, m := range psParameter.FindAllStringSubmatch(line, -1) {
			params[m[1]] = strings.ReplaceAll(m[2], "''", "'")
		}
		if params["EKSClusterName"] == "" {
			return nil, fmt.Errorf("Start-EKSBootstrap.ps1 call without a quoted -EKSClusterName: %q", line)
		}
		jc := &JoinConfig{Cluster: params["EKSClusterName"], Labels: map[string]string{}}
		if err := applyKubeletFlags(jc, shellWords(params["KubeletExtraArgs"])); err != nil {
			return nil, err
		}
		return jc, nil
	}
	return nil, nil
}
