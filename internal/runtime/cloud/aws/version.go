package aws

import (
	"fmt"
	"strings"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// DiscoverKubernetesVersion returns a function that asks the API server for
// its minor version ("1.36"), for Settings.KubernetesVersionFunc.
func DiscoverKubernetesVersion(cfg *rest.Config) func() (string, error) {
	return func() (string, error) {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return "", err
		}
		v, err := dc.ServerVersion()
		if err != nil {
			return "", fmt.Errorf("asking the API server for its version: %w", err)
		}
		return MinorVersion(v.Major, v.Minor), nil
	}
}

// MinorVersion renders "1" and "36+" (as some distributions report) as "1.36".
func MinorVersion(major, minor string) string {
	return major + "." + strings.TrimRight(minor, "+")
}
