package kubelet

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/mail"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// JoinConfig is what a node's bootstrap reads from its user data: whether
// and how it joins the cluster.
type JoinConfig struct {
	Cluster string
	Labels  map[string]string
	Taints  []corev1.Taint
	MaxPods int32 // 0: derived from the instance type
	// KubeReserved, SystemReserved and EvictionHard are the kubelet
	// configuration's reservations; a key absent keeps the node image's
	// default (nodeadm merges an inline kubelet config over its defaults
	// key by key).
	KubeReserved, SystemReserved, EvictionHard map[string]string
}

// ParseUserData reads the join configuration from instance user data in any
// of the formats EKS node images accept: an AL2023 NodeConfig (alone or in a
// MIME multipart document), an AL2 bootstrap.sh call (a shell script alone or
// in MIME), Bottlerocket TOML settings, or a Windows Start-EKSBootstrap.ps1
// call. It returns nil when the user data tells the node to join no cluster.
func ParseUserData(userData string) (*JoinConfig, error) {
	trimmed := strings.TrimSpace(userData)
	switch {
	case trimmed == "":
		return nil, nil
	case strings.HasPrefix(trimmed, "<powershell>"):
		return parseWindowsBootstrap(trimmed)
	case strings.HasPrefix(trimmed, "MIME-Version:") || strings.HasPrefix(trimmed, "Content-Type: multipart"):
		return parseMIME(trimmed)
	case strings.Contains(trimmed, "[settings.kubernetes"):
		return parseBottlerocket(trimmed)
	case strings.Contains(trimmed, "node.eks.aws/"):
		var jc *JoinConfig
		return jc, mergeNodeConfig(&jc, trimmed)
	default:
		return parseBootstrapScript(trimmed)
	}
}

func parseMIME(doc string) (*JoinConfig, error) {
	msg, err := mail.ReadMessage(strings.NewReader(doc + "\n"))
	if err != nil {
		return nil, fmt.Errorf("user data MIME headers: %w", err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return nil, fmt.Errorf("user data MIME document has no multipart boundary: %v", err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var jc *JoinConfig
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			return jc, nil
		}
		if err != nil {
			return nil, fmt.Errorf("user data MIME part: %w", err)
		}
		body, err := io.ReadAll(part)
		if err != nil {
			return nil, err
		}
		ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		switch ct {
		case "application/node.eks.aws":
			if err := mergeNodeConfig(&jc, string(body)); err != nil {
				return nil, err
			}
		case "text/x-shellscript":
			sh, err := parseBootstrapScript(string(body))
			if err != nil {
				return nil, err
			}
			if sh != nil {
				jc = sh
			}
		}
	}
}

// nodeConfig is the part of nodeadm's NodeConfig (node.eks.aws/v1alpha1) that decides registration.
type nodeConfig struct {
	Kind string `json:"kind"`
	Spec struct {
		Cluster struct {
			Name              string `json:"name"`
			APIServerEndpoint string `json:"apiServerEndpoint"`
		} `json:"cluster"`
		Kubelet struct {
			Config kubeletConfig `json:"config"`
			Flags  []string      `json:"flags"`
		} `json:"kubelet"`
	} `json:"spec"`
}

// kubeletConfig is the part of a KubeletConfiguration that decides how a
// node registers and what it can hold.
type kubeletConfig struct {
	MaxPods            *int32            `json:"maxPods"`
	RegisterWithTaints []corev1.Taint    `json:"registerWithTaints"`
	KubeReserved       map[string]string `json:"kubeReserved"`
	SystemReserved     map[string]string `json:"systemReserved"`
	EvictionHard       map[string]string `json:"evictionHard"`
}

// mergeNodeConfig applies one NodeConfig document (YAML or JSON) over jc;
// later documents win, as nodeadm merges them.
func mergeNodeConfig(jc **JoinConfig, doc string) error {
	var nc nodeConfig
	if err := yaml.Unmarshal([]byte(doc), &nc); err != nil {
		return fmt.Errorf("NodeConfig in user data: %w", err)
	}
	if nc.Kind != "" && nc.Kind != "NodeConfig" {
		return nil
	}
	if *jc == nil {
		*jc = &JoinConfig{Labels: map[string]string{}}
	}
	c := *jc
	if nc.Spec.Cluster.Name != "" {
		c.Cluster = nc.Spec.Cluster.Name
	}
	kc := nc.Spec.Kubelet.Config
	if kc.MaxPods != nil {
		c.MaxPods = *kc.MaxPods
	}
	if kc.RegisterWithTaints != nil {
		for _, t := range kc.RegisterWithTaints {
			if _, err := parseTaint(t.ToString()); err != nil {
				return fmt.Errorf("NodeConfig kubelet.config.registerWithTaints: %w", err)
			}
		}
		c.Taints = kc.RegisterWithTaints
	}
	c.KubeReserved = mergeKeys(c.KubeReserved, kc.KubeReserved)
	c.SystemReserved = mergeKeys(c.SystemReserved, kc.SystemReserved)
	c.EvictionHard = mergeKeys(c.EvictionHard, kc.EvictionHard)
	// Flags win over the configuration file, as in kubelet.
	if err := applyKubeletFlags(c, nc.Spec.Kubelet.Flags); err != nil {
		return err
	}
	if c.Cluster == "" {
		*jc = nil // a NodeConfig without a cluster joins nothing
	}
	return nil
}

// mergeKeys returns base with over's keys set over it.
func mergeKeys(base, over map[string]string) map[string]string {
	if len(over) == 0 {
		return base
	}
	out := make(map[string]string, len(base)+len(over))
	maps.Copy(out, base)
	maps.Copy(out, over)
	return out
}

// parseBootstrapScript finds an AL2 `/etc/eks/bootstrap.sh <cluster> ...`
// call and its --kubelet-extra-args.
func parseBootstrapScript(script string) (*JoinConfig, error) {
	s := bufio.NewScanner(strings.NewReader(strings.ReplaceAll(script, "\\\n", " ")))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		i := strings.Index(line, "/etc/eks/bootstrap.sh")
		if i < 0 {
			continue
		}
		args := shellWords(line[i+len("/etc/eks/bootstrap.sh"):])
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return nil, fmt.Errorf("bootstrap.sh call without a cluster name: %q", line)
		}
		jc := &JoinConfig{Cluster: args[0], Labels: map[string]string{}}
		for j := 1; j < len(args); j++ {
			if args[j] == "--kubelet-extra-args" && j+1 < len(args) {
				if err := applyKubeletFlags(jc, shellWords(args[j+1])); err != nil {
					return nil, err
				}
				j++
			}
		}
		return jc, nil
	}
	return nil, s.Err()
}

// shellWords splits a command line on blanks, honouring single and double quotes.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// applyKubeletFlags reads --node-labels, --register-with-taints and --max-pods.
func applyKubeletFlags(jc *JoinConfig, flags []string) error {
	for _, f := range flags {
		name, value, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		value = strings.Trim(value, `"'`) // NodeConfig flags carry shell quoting
		switch name {
		case "node-labels":
			for _, kv := range splitList(value) {
				k, v, _ := strings.Cut(kv, "=")
				jc.Labels[k] = v
			}
		case "register-with-taints":
			var taints []corev1.Taint
			for _, t := range splitList(value) {
				taint, err := parseTaint(t)
				if err != nil {
					return err
				}
				taints = append(taints, taint)
			}
			jc.Taints = taints
		case "max-pods":
			n, err := strconv.Atoi(value)
			if err != nil {
				return fmt.Errorf("--max-pods=%q: %w", value, err)
			}
			jc.MaxPods = int32(n)
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseTaint reads key[=value]:Effect.
func parseTaint(s string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("taint %q has no effect: use key=value:Effect", s)
	}
	switch corev1.TaintEffect(effect) {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return corev1.Taint{}, fmt.Errorf("taint %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", s, effect)
	}
	k, v, _ := strings.Cut(kv, "=")
	return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)}, nil
}
