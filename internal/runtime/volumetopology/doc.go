// Package volumetopology turns the storage a pod uses into where a new node
// for it may be: a bound PersistentVolumeClaim's PersistentVolume node
// affinity, or for an unbound claim its StorageClass allowedTopologies when
// binding waits for the first consumer. The result is the alternative
// requirement sets the solver takes as Input.VolumeTopology; they constrain
// the node only, not the pod's own topology spread counting.
//
// Everything here is pure: the claims, volumes and storage classes come in
// as an Objects value read from the informers beforehand. A pod whose
// storage cannot be resolved yet (a claim that does not exist, a storage
// class that is missing, a claim that must be bound first) gets an error
// and is left out of the scheduling pass, as Karpenter does.
package volumetopology
