// Package controllerdeploy renders the in-cluster objects that run the
// Joist controller: ServiceAccount, RBAC, Deployment, PodDisruptionBudget
// and metrics Service, from one Spec. The Terraform resource joist_controller
// applies them with server-side apply; tests and tools read the settings
// back from the Deployment's environment with Env.
package controllerdeploy
