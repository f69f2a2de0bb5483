package kubelet

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// parseBottlerocket reads the Kubernetes settings of Bottlerocket TOML user
// data: [settings.kubernetes] cluster-name and max-pods,
// [settings.kubernetes.node-labels] and [settings.kubernetes.node-taints].
// Only the TOML the settings use is understood: tables, and keys (bare or
// quoted) with string, integer or string-array values.
func parseBottlerocket(doc string) (*JoinConfig, error) {
	jc := &JoinConfig{Labels: map[string]string{}}
	table := ""
	s := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			table = strings.Trim(line, "[] ")
			continue
		}
		key, raw, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("Bottlerocket user data line %d: %q is not key = value", n, line)
		}
		key = unquote(strings.TrimSpace(key))
		raw = strings.TrimSpace(raw)
		switch table {
		case "settings.kubernetes":
			switch key {
			case "cluster-name":
				jc.Cluster = unquote(raw)
			case "max-pods":
				v, err := strconv.Atoi(raw)
				if err != nil {
					return nil, fmt.Errorf("Bottlerocket max-pods %q: %w", raw, err)
				}
				jc.MaxPods = int32(v)
			}
		case "settings.kubernetes.node-labels":
			jc.Labels[key] = unquote(raw)
		case "settings.kubernetes.node-taints":
			// A taint key maps to "value:Effect" or a list of them.
			for _, v := range stringList(raw) {
				if !strings.Contains(v, ":") {
					v = ":" + v // an effect alone: a taint without a value
				}
				t, err := parseTaint(key + "=" + v)
				if err != nil {
					return nil, err
				}
				jc.Taints = append(jc.Taints, t)
			}
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if jc.Cluster == "" {
		return nil, nil
	}
	return jc, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

func stringList(raw string) []string {
	if !strings.HasPrefix(raw, "[") {
		return []string{unquote(raw)}
	}
	var out []string
	for _, item := range strings.Split(strings.Trim(raw, "[]"), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, unquote(item))
		}
	}
	return out
}
