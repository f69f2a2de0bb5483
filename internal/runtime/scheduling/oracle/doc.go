// Package oracle checks the solver from outside: Validate re-checks a plan
// against its input constraint by constraint, sharing no placement code
// with the solver, and the lower bounds price what any packing must pay.
// Tests and benchmarks use it; product code never imports it.
package oracle
