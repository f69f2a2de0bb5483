package settings

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
