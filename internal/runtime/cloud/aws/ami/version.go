package ami

import (
	"fmt"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// ServerVersion asks the API server at cfg for its minor version ("1.36"),
// the version the alias parameters name. The controller and the plan of a
// node class both resolve aliases with it.
func ServerVersion(cfg *rest.Config) (string, error) {
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
