package scheduling

// coverLP is the pattern formulation of packing pods onto new nodes. A
// column (pattern) is one node of some instance type holding k_i pods of
// each class i; the LP picks how many nodes of each pattern to buy:
//
//	min Σ_p price_p·x_p  s.t.  Σ_p k_ip·x_p ≥ n_i,  x ≥ 0.
//
// It is solved with the revised simplex method and an explicit basis
// inverse: there is one row per pod class, so the basis stays small however
// many pods or columns there are. Columns are added between solves (column
// generation); the basis carries over.
type coverLP struct {
	demand []float64
	cols   [][]float64
	cost   []float64
	// basis holds, per row, the basic variable: a column index, or -1-i
	// for the surplus variable of row i.
	basis []int
	binv  [][]float64
	xb    []float64
}

// newCoverLP starts from one column per row that covers only that row
// (diag[i] pods of class i at price[i]), which is a feasible basis.
func newCoverLP(demand, diag, price []float64) *coverLP {
	m := len(demand)
	lp := &coverLP{demand: demand, basis: make([]int, m), binv: make([][]float64, m), xb: make([]float64, m)}
	for i := range demand {
		col := make([]float64, m)
		col[i] = diag[i]
		lp.cols = append(lp.cols, col)
		lp.cost = append(lp.cost, price[i])
		lp.basis[i] = i
		lp.binv[i] = make([]float64, m)
		lp.binv[i][i] = 1 / diag[i]
		lp.xb[i] = demand[i] / diag[i]
	}
	return lp
}

func (lp *coverLP) addColumn(col []float64, cost float64) {
	lp.cols = append(lp.cols, col)
	lp.cost = append(lp.cost, cost)
}

// duals are the simplex multipliers c_B·B⁻¹: at the optimum, what one more
// pod of each class costs.
func (lp *coverLP) duals() []float64 {
	m := len(lp.demand)
	pi := make([]float64, m)
	for r, j := range lp.basis {
		if j < 0 {
			continue
		}
		c := lp.cost[j]
		for k := 0; k < m; k++ {
			pi[k] += c * lp.binv[r][k]
		}
	}
	return pi
}

// optimize pivots until no column or surplus prices out, or maxIter pivots.
// Every basis it visits is feasible, so stopping early still leaves a
// usable solution.
func (lp *coverLP) optimize(maxIter int) {
	m := len(lp.demand)
	inBasis := make(map[int]bool, m)
	for _, j := range lp.basis {
		inBasis[j] = true
	}
	u := make([]float64, m)
	a := make([]float64, m)
	// After a run of degenerate pivots (no progress), Bland's rule — the
	// first improving variable, not the most improving — rules out cycling.
	degenerate := 0
	for iter := 0; iter < maxIter; iter++ {
		pi := lp.duals()
		bland := degenerate > m
		enter, best := 0, -1e-12
		found := false
		for i := 0; i < m && !(bland && found); i++ {
			// The surplus of row i has cost 0 and column -e_i.
			if !inBasis[-1-i] && pi[i] < best {
				enter, best, found = -1-i, pi[i], true
			}
		}
		for j, col := range lp.cols {
			if bland && found {
				break
			}
			if inBasis[j] {
				continue
			}
			d := lp.cost[j]
			for i, v := range col {
				d -= pi[i] * v
			}
			if d < best {
				enter, best, found = j, d, true
			}
		}
		if !found {
			return
		}
		if enter >= 0 {
			copy(a, lp.cols[enter])
		} else {
			clear(a)
			a[-1-enter] = -1
		}
		for r := 0; r < m; r++ {
			var s float64
			for k, v := range a {
				if v != 0 {
					s += lp.binv[r][k] * v
				}
			}
			u[r] = s
		}
		leave, ratio := -1, 0.0
		for r := 0; r < m; r++ {
			if u[r] > 1e-9 {
				t := lp.xb[r] / u[r]
				if leave < 0 || t < ratio-1e-12 || (bland && t <= ratio+1e-12 && lp.basis[r] < lp.basis[leave]) {
					leave, ratio = r, t
				}
			}
		}
		if leave < 0 {
			// Unbounded is impossible with non-negative costs; treat as done.
			return
		}
		if ratio <= 1e-12 {
			degenerate++
		} else {
			degenerate = 0
		}
		piv := u[leave]
		for k := range lp.binv[leave] {
			lp.binv[leave][k] /= piv
		}
		lp.xb[leave] /= piv
		for r := 0; r < m; r++ {
			if r == leave || u[r] == 0 {
				continue
			}
			f := u[r]
			for k := range lp.binv[r] {
				lp.binv[r][k] -= f * lp.binv[leave][k]
			}
			lp.xb[r] -= f * lp.xb[leave]
			if lp.xb[r] < 0 {
				lp.xb[r] = 0
			}
		}
		delete(inBasis, lp.basis[leave])
		lp.basis[leave] = enter
		inBasis[enter] = true
	}
}

// solution returns the basic columns with their values (surplus omitted).
func (lp *coverLP) solution() map[int]float64 {
	out := map[int]float64{}
	for r, j := range lp.basis {
		if j >= 0 && lp.xb[r] > 0 {
			out[j] = lp.xb[r]
		}
	}
	return out
}

// objective is the cost of the current basic solution.
func (lp *coverLP) objective() float64 {
	var s float64
	for j, x := range lp.solution() {
		s += lp.cost[j] * x
	}
	return s
}
