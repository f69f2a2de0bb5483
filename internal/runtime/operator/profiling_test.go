package operator

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestProfilingServesHeapProfile(t *testing.T) {
	mux := http.NewServeMux()
	for path, h := range profilingHandlers() {
		mux.Handle(path, h)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/pprof/heap")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("GET /debug/pprof/heap: %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
}
