package termination

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// removeFinalizer drops finalizer from obj with a JSON patch that tests the
// entry it removes. It needs no resourceVersion: under load the informer
// lags, and a patch locked to the cached version lost a conflict on every
// try while other controllers wrote the object's status (a 10,000-pod
// teardown spent most of its API calls on such conflicts). A concurrent
// change to the finalizer list still fails the test instead of being lost.
func removeFinalizer(ctx context.Context, kube client.Client, obj client.Object, finalizer string) error {
	for i, f := range obj.GetFinalizers() {
		if f != finalizer {
			continue
		}
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch, err := json.Marshal([]map[string]any{
			{"op": "test", "path": path, "value": finalizer},
			{"op": "remove", "path": path},
		})
		if err != nil {
			return err
		}
		return client.IgnoreNotFound(kube.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch)))
	}
	return nil
}
