package sandbox

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
)

// probeClient talks to components' own serving endpoints, whose certificates
// are self-signed at start-up; only health paths are fetched.
var probeClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec

func healthz(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := probeClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%w: %s %d %s", errNotReady, url, resp.StatusCode, body)
		}
		return nil
	}
}

// FreePort asks the kernel for an unused loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portOrFree(p int) (int, error) {
	if p != 0 {
		return p, nil
	}
	return FreePort()
}

func hostPort(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)) }
