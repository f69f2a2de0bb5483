package provider

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The plan Terraform makes again inside apply must read back the plan's
// prediction, though the cluster (here: what predict returns) has moved.
func TestCachedPredictionIsTheCommandsFirst(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("TF_PLUGIN_MAGIC_COOKIE", "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2")
	predicted := 0
	predict := func() (int, error) { predicted++; return predicted, nil }
	key := []any{"joist_node_pool", "cluster", "https://k8s", map[string]string{"pool": "general"}}
	first, _ := cachedPrediction(key, predict)
	again, _ := cachedPrediction(key, predict)
	if first != 1 || again != 1 {
		t.Errorf("predictions %d then %d, want the first twice", first, again)
	}
	other, _ := cachedPrediction([]any{"joist_node_pool", "cluster", "https://k8s", map[string]string{"pool": "batch"}}, predict)
	if other != 2 {
		t.Errorf("another pool's prediction %d, want a new one (2)", other)
	}
}

// Outside a terraform command (in process) every call predicts afresh.
func TestCachedPredictionInProcessPredictsAfresh(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("TF_PLUGIN_MAGIC_COOKIE", "")
	predicted := 0
	predict := func() (int, error) { predicted++; return predicted, nil }
	cachedPrediction([]any{"k"}, predict)
	if again, _ := cachedPrediction([]any{"k"}, predict); again != 2 {
		t.Errorf("second prediction %d, want a new one (2)", again)
	}
}

// Directories of commands long gone are removed; a live one stays.
func TestStaleImpactCachesRemoved(t *testing.T) {
	parent := t.TempDir()
	old, live := filepath.Join(parent, impactCachePrefix+"1"), filepath.Join(parent, impactCachePrefix+"2")
	for _, d := range []string{old, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * impactCacheTTL)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	removeStaleImpactCaches(parent)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("%s not removed: %v", old, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s removed: %v", live, err)
	}
}

// TestCommandIDCarriesTheStartTime: where /proc tells it, a command's id
// holds its start time besides its pid, so a later process that reuses the
// pid gets other predictions; it is stable for one process.
func TestCommandIDCarriesTheStartTime(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here: the id is the pid alone")
	}
	pid := os.Getpid()
	id := commandID(pid)
	start, ok := strings.CutPrefix(id, strconv.Itoa(pid)+"-")
	if !ok || start == "" || strings.ContainsAny(start, " )") {
		t.Fatalf("command id %q, want %d-<start time>", id, pid)
	}
	if again := commandID(pid); again != id {
		t.Fatalf("command id changed within one process: %q then %q", id, again)
	}
	if gone := commandID(1 << 30); gone != strconv.Itoa(1<<30) {
		t.Fatalf("a pid with no process reads %q", gone)
	}
}
