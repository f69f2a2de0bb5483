package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator"
	"github.com/joistdev/terraform-provider-joist/internal/sdkhttp"
)

// World is a running sandbox as its users reach it: the environment
// `sandbox up` wrote (KUBECONFIG and the AWS settings), a Kubernetes client
// and an AWS SDK configuration.
type World struct {
	Dir  string
	Env  map[string]string
	Kube client.Client
	AWS  aws.Config
}

// Connect reads the environment file of the sandbox in dir.
func Connect(dir string) (*World, error) {
	env, err := readEnv(filepath.Join(dir, "env"))
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"KUBECONFIG", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if env[k] == "" {
			return nil, fmt.Errorf("demo: %s has no %s; restart the sandbox with `make demo-down` and `make demo`", filepath.Join(dir, "env"), k)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env["KUBECONFIG"])
	if err != nil {
		return nil, fmt.Errorf("demo: kubeconfig %s: %w", env["KUBECONFIG"], err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	scheme, err := operator.Scheme()
	if err != nil {
		return nil, err
	}
	kube, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	return &World{
		Dir: dir, Env: env, Kube: kube,
		AWS: aws.Config{
			HTTPClient:   sdkhttp.Client(),
			Region:       env["AWS_REGION"],
			Credentials:  credentials.NewStaticCredentialsProvider(env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], ""),
			BaseEndpoint: aws.String(env["AWS_ENDPOINT_URL"]),
		},
	}, nil
}

// readEnv parses the `export K=V` lines `sandbox up` writes.
func readEnv(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("demo: reading the sandbox environment: %w", err)
	}
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env, sc.Err()
}

// Environ is the process environment with the sandbox's on top, for the
// commands the demo runs (terraform).
func (w *World) Environ(extra ...string) []string {
	out := os.Environ()
	for k, v := range w.Env {
		out = append(out, k+"="+v)
	}
	return append(out, extra...)
}

// Admin calls awssim's control API (/_awssim/...), the sandbox's stand-in
// for what AWS does on its own: interrupting spot capacity, releasing AMIs.
func (w *World) Admin(ctx context.Context, method, path string, body, into any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(w.Env["AWS_ENDPOINT_URL"], "/")+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := sdkhttp.Client().Do(req)
	if err != nil {
		return fmt.Errorf("awssim %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("awssim %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if into != nil {
		return json.Unmarshal(b, into)
	}
	return nil
}
