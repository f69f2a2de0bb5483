package provider

// strayFields is a JSON merge patch removing what live has and desired
// lacks, map entries included. Server-side apply removes only the fields
// the provider's field manager owned; fields someone else set out of band
// (kubectl edit) survive it, while the configuration, which is the truth
// for the whole spec, says they should not exist. Lists need nothing: the
// API's lists are atomic, so apply replaced them whole.
func strayFields(live, desired map[string]any) map[string]any {
	patch := map[string]any{}
	for k, lv := range live {
		dv, ok := desired[k]
		if !ok {
			patch[k] = nil
			continue
		}
		lm, lok := lv.(map[string]any)
		dm, dok := dv.(map[string]any)
		if lok && dok {
			if sub := strayFields(lm, dm); len(sub) > 0 {
				patch[k] = sub
			}
		}
	}
	return patch
}
