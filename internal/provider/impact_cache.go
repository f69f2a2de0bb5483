package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Terraform plans every changed resource again during apply, to fill in the
// values learned so far, and fails the apply ("Provider produced
// inconsistent final plan") when a value the plan showed comes out
// different. A prediction made afresh then reads a cluster that has moved
// since the plan (pods placed, nodes launched, other pools changing), so
// the predictions a terraform command makes are kept, by their inputs, for
// the rest of that command: the plan inside its apply reads back what its
// plan showed, and the next command predicts afresh.

// impactCacheDir is where the running terraform command's predictions are
// kept, or "" when the provider was not started by a terraform command (in
// process, as in tests), where nothing outlives the call.
func impactCacheDir() string {
	// Terraform starts providers as go-plugin children with this cookie
	// set; the parent is then the terraform command.
	if os.Getenv("TF_PLUGIN_MAGIC_COOKIE") == "" {
		return ""
	}
	return filepath.Join(os.TempDir(), impactCachePrefix+commandID(os.Getppid()))
}

// commandID names the terraform command with process id pid: the id and,
// where /proc tells it, the process's start time, so a later command that
// reuses the id never reads an earlier command's predictions.
func commandID(pid int) string {
	id := strconv.Itoa(pid)
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return id
	}
	// The fields after the command name (which may hold spaces) start at
	// the state, field 3; the start time is field 22.
	i := strings.LastIndex(string(stat), ") ")
	if i < 0 {
		return id
	}
	rest := string(stat)[i+2:]
	if f := strings.Fields(rest); len(f) > 19 {
		return id + "-" + f[19]
	}
	return id
}

const impactCachePrefix = "joist-planned-impact-"

// impactCacheTTL is how long a command's predictions are kept after it
// wrote the last: longer than any command runs.
const impactCacheTTL = 24 * time.Hour

// cachedPrediction returns the prediction this terraform command made for
// key, or makes it with predict and keeps it. A prediction that cannot be
// kept is still returned: only a changed cluster makes the two differ.
func cachedPrediction[T any](key []any, predict func() (T, error)) (T, error) {
	dir := impactCacheDir()
	if dir == "" {
		return predict()
	}
	b, err := json.Marshal(key)
	if err != nil {
		return predict()
	}
	sum := sha256.Sum256(b)
	path := filepath.Join(dir, hex.EncodeToString(sum[:])+".json")
	if data, err := os.ReadFile(path); err == nil {
		var v T
		if json.Unmarshal(data, &v) == nil {
			return v, nil
		}
	}
	v, err := predict()
	if err == nil {
		keepPrediction(dir, path, v)
	}
	return v, err
}

// keepPrediction writes v to path (through a temporary file, so a reader
// never sees half of it), and removes what commands long gone left.
func keepPrediction(dir, path string, v any) {
	data, err := json.Marshal(v)
	if err != nil || os.MkdirAll(dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, "tmp-")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		_ = os.Remove(tmp.Name())
	}
	removeStaleImpactCaches(filepath.Dir(dir))
}

// removeStaleImpactCaches removes the prediction directories of commands
// that have not written for impactCacheTTL.
func removeStaleImpactCaches(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), impactCachePrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > impactCacheTTL {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}
