package meter

// A region's weight is the longest path through it, not the sum of its
// instructions: a round of a loop runs one arm of each if and br_table,
// so charging every arm made the units several times the instructions
// run (the JSON kernel of make bench-compute: a loop of 552 instructions
// whose rounds run a few dozen), and the tick that many times more often.
// The longest path still bounds what runs from above, since a region has
// no backward branch but its loop's, which charges again.
//
// The walk follows the structured control flow in one pass. Each region
// keeps the length of the longest path from its entry to the instruction
// being read (dist), or deadPath where no path reaches it (after br,
// br_table, return, unreachable), and the longest seen (peak): its weight.
// Each block keeps the longest path that reaches its end by a branch; at
// its end the paths merge. A branch out of an inner loop reaches an outer
// block with the outer region's path as it was when the loop began (the
// loop's own instructions are its region's), which is that region's dist,
// untouched while the loop is read. A branch to a loop goes back to its
// header and ends the path there.

// deadPath is the length of no path: code no path of its region reaches.
const deadPath = -1

// frame is an open block, if or loop.
type frame struct {
	loop, isIf, sawElse bool
	// region is the index in regions of the region the block is in (for a
	// loop, the one it is in, not its own).
	region int
	// target is the longest path reaching the block's end by a branch (or
	// an if's then-arm falling through its else); atIf is an if's path at
	// the if, where its else-arm starts.
	target, atIf int64
}

// step adds n units to the path of the innermost region.
func (f *funcWriter) step(n uint32) {
	if len(f.regions) == 0 {
		return
	}
	r := &f.regions[len(f.regions)-1]
	if r.dist == deadPath {
		return
	}
	r.dist += int64(n)
	r.peak = max(r.peak, r.dist)
}

// openBlock opens a block or an if.
func (f *funcWriter) openBlock(isIf bool) {
	fr := frame{isIf: isIf, region: len(f.regions) - 1, target: deadPath, atIf: deadPath}
	if isIf && fr.region >= 0 {
		fr.atIf = f.regions[fr.region].dist
	}
	f.ctrl = append(f.ctrl, fr)
}

// branch notes a branch to the label depth: forward to a block's end, the
// path goes on there.
func (f *funcWriter) branch(depth uint32) {
	if uint64(depth) >= uint64(len(f.ctrl)) {
		return // the function's own label: a return
	}
	fr := &f.ctrl[len(f.ctrl)-1-int(depth)]
	if fr.loop || fr.region < 0 {
		return // back to a loop's header, which charges again
	}
	fr.target = max(fr.target, f.regions[fr.region].dist)
}

// deadEnd notes that no path goes past the instruction just read.
func (f *funcWriter) deadEnd() {
	if n := len(f.regions); n > 0 {
		f.regions[n-1].dist = deadPath
	}
}

// elseArm starts an if's else-arm: the then-arm's path goes to the end.
func (f *funcWriter) elseArm() {
	f.step(1)
	if len(f.ctrl) == 0 || len(f.regions) == 0 {
		return
	}
	fr := &f.ctrl[len(f.ctrl)-1]
	r := &f.regions[len(f.regions)-1]
	fr.target = max(fr.target, r.dist)
	r.dist, fr.sawElse = fr.atIf, true
}

// closeBlock merges the paths at the end of a block or an if (one without
// an else has an empty else-arm) and counts the end.
func (f *funcWriter) closeBlock(fr frame) {
	if fr.isIf && !fr.sawElse {
		fr.target = max(fr.target, fr.atIf)
	}
	if n := len(f.regions); n > 0 {
		f.regions[n-1].dist = max(f.regions[n-1].dist, fr.target)
	}
	f.step(1)
}

// closeLoop counts a loop's end in its region, leaves the region, and
// carries on in the region around: past the loop only if its end is
// reached by falling through (its other exits are branches, noted).
func (f *funcWriter) closeLoop() {
	f.step(1)
	fallsThrough := f.regions[len(f.regions)-1].dist != deadPath
	f.leaveRegion()
	if !fallsThrough {
		f.deadEnd()
	}
}
