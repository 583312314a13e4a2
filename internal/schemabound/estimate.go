package schemabound

// estimate is one Admits walk.
type estimate struct {
	g    *graph
	over bool // a bound was passed
}

// cost is the work of applying node i to v, depth levels into the arguments.
func (e *estimate) cost(i int, v any, depth int) uint64 {
	if e.over || depth > MaxArgsDepth {
		e.over = true
		return MaxWork + 1
	}
	n := e.g.nodes[i]
	obj, _ := v.(map[string]any)
	arr, _ := v.([]any)
	c := ApplyCost + n.weight + uint64(len(obj)+len(arr))
	if str, ok := v.(string); ok && n.pattern > 0 {
		c = addSat(c, mulSat(uint64(len(str)), n.pattern)/MatchSteps)
	}
	if n.keyPatterns > 0 {
		for k := range obj {
			c = addSat(c, mulSat(uint64(len(k)), n.keyPatterns)/MatchSteps)
		}
	}
	for _, ed := range n.edges {
		switch ed.kind {
		case sameValue:
			c = addSat(c, e.cost(ed.to, v, depth))
		case member:
			if m, ok := obj[ed.key]; ok {
				c = addSat(c, e.cost(ed.to, m, depth+1))
			}
		case everyMember:
			for k, m := range obj {
				if ed.key == "propertyNames" {
					m = k
				}
				if c = addSat(c, e.cost(ed.to, m, depth+1)); c > MaxWork {
					break
				}
			}
		case element:
			if ed.idx < len(arr) {
				c = addSat(c, e.cost(ed.to, arr[ed.idx], depth+1))
			}
		case everyElement:
			for _, m := range arr {
				if c = addSat(c, e.cost(ed.to, m, depth+1)); c > MaxWork {
					break
				}
			}
		}
		if c > MaxWork {
			e.over = true
			return c
		}
	}
	return c
}

// satMax is where work sums stop growing: far past any bound, far from overflow.
const satMax = 1 << 62

// addSat is a+b, at most satMax.
// mulSat is a*b, or satMax when that is more.
func mulSat(a, b uint64) uint64 {
	if a != 0 && b > satMax/a {
		return satMax
	}
	return a * b
}

func addSat(a, b uint64) uint64 {
	if a+b > satMax || a+b < a {
		return satMax
	}
	return a + b
}
