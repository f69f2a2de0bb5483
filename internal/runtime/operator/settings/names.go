package settings

import "fmt"

// Names lists the environment variable of every setting, in the order
// Usage prints them.
func Names() []string {
	out := make([]string, len(settings))
	for i, s := range settings {
		out[i] = s.env
	}
	return out
}

// Known reports whether the controller has a setting read from the
// environment variable env.
func Known(env string) bool {
	for _, s := range settings {
		if s.env == env {
			return true
		}
	}
	return false
}

// Default is the default value of the setting read from env ("" when it
// has none or is unknown).
func Default(env string) string {
	for _, s := range settings {
		if s.env == env {
			return s.def
		}
	}
	return ""
}

// GateNames lists the feature gates the controller knows, sorted.
func GateNames() []string { return knownGateNames() }

// Unimplemented reports whether env is a Karpenter setting the controller
// has no behaviour for (accepted only at Karpenter's default).
func Unimplemented(env string) bool {
	for _, f := range foreign {
		if f.env == env {
			return true
		}
	}
	return false
}

// CheckUnimplemented is the controller's verdict on value for a Karpenter
// setting it has no behaviour for: nil at Karpenter's default, else the
// error the controller's start would fail with.
func CheckUnimplemented(env, value string) error {
	for _, f := range foreign {
		if f.env == env {
			if atDefault(f, value) {
				return nil
			}
			return foreignError(f, value)
		}
	}
	return fmt.Errorf("%s is not a Karpenter setting the controller knows", env)
}

// GateSupported reports whether the named gate (of FEATURE_GATES or
// AWS_FEATURE_GATES) is one the controller acts on when turned on.
func GateSupported(name string) bool {
	for _, g := range append(append([]Gate{}, Gates...), AWSGates...) {
		if g.Name == name {
			return g.Unsupported == ""
		}
	}
	return false
}

// AWSGateNames lists the AWS provider's feature gates, sorted.
func AWSGateNames() []string { return gateNames(AWSGates) }
