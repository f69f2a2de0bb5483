package ec2

import "sort"

func sortBy[T any](s []T, key func(T) string) {
	sort.SliceStable(s, func(i, j int) bool { return key(s[i]) < key(s[j]) })
}
