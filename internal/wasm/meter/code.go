package meter

import (
	"errors"
	"fmt"

	"github.com/cmdhost/cmdhost/internal/wasmbin"
)

func (m *module) rewriteCode(r *wasmbin.Reader) ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, fmt.Errorf("code section: %w", err)
	}
	if n != uint32(len(m.funcTypes)) {
		return nil, fmt.Errorf("code section: %d bodies for %d functions", n, len(m.funcTypes))
	}
	bodies := make([][]byte, n)
	for i := range bodies {
		size, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("function body %d: %w", i, err)
		}
		if bodies[i], err = r.Bytes(size); err != nil {
			return nil, fmt.Errorf("function body %d: %w", i, err)
		}
		if t := m.funcTypes[i]; t >= m.types {
			return nil, fmt.Errorf("function %d: type index %d out of range", i, t)
		}
	}
	// A first pass finds the functions that cannot be reached but by a
	// direct call (not exported, the start, in a table or ref.func'd) and
	// whose entry region weighs at most maxOwnWeight: that weight, their
	// own, is charged at each direct call site instead, with the caller's
	// region. The entry of such a function subtracts only what the calls
	// in its entry region add, or, when that is nothing, only checks the
	// counter (a load, no store: fib's entry); a leaf (no call of the
	// module, direct or not) runs bounded code but for its loops, which
	// check, and has no code at its entry at all. Each call still passes
	// a check (the callee's, or the leaf's caller's), so recursion and
	// call trees are cut as before. The first pass's output is kept: the
	// second redoes only the functions that change (charged at their call
	// sites, or calling one that is), so a module whose functions are all
	// in its table (a Go guest's) is read once.
	var body, first []byte
	ends := make([]int, n)
	own := make([]uint32, n)
	isLeaf := make([]bool, n)
	callees := make([][]uint32, n)
	for i, b := range bodies {
		f := &funcWriter{m: m, r: &wasmbin.Reader{B: b}, params: m.params[m.funcTypes[i]]}
		var err error
		if body, err = f.rewrite(body[:0]); err != nil {
			return nil, fmt.Errorf("function body %d: %w", i, err)
		}
		first = append(first, body...)
		ends[i], callees[i] = len(first), f.callees
		if f.entryWeight <= maxOwnWeight {
			own[i], isLeaf[i] = f.entryWeight, !f.calls
		}
	}
	for i := range own {
		if m.escaped[m.importedFuncs+uint32(i)] { // seen in all the code now
			own[i], isLeaf[i] = 0, false
		}
	}
	m.own, m.leaf = own, isLeaf
	out := wasmbin.AppendU32(nil, n)
	start := 0
	for i, b := range bodies {
		body := first[start:ends[i]]
		start = ends[i]
		if own[i] > 0 || m.callsCharged(callees[i]) {
			f := &funcWriter{m: m, r: &wasmbin.Reader{B: b}, params: m.params[m.funcTypes[i]], own: own[i], leaf: isLeaf[i]}
			var err error
			if body, err = f.rewrite(nil); err != nil {
				return nil, fmt.Errorf("function body %d: %w", i, err)
			}
		}
		out = wasmbin.AppendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	return out, nil
}

// callsCharged says whether one of the functions is charged at its call
// sites (a function that calls one is rewritten differently).
func (m *module) callsCharged(fns []uint32) bool {
	for _, fn := range fns {
		if m.ownWeight(fn) > 0 {
			return true
		}
	}
	return false
}

// maxOwnWeight bounds the entry weight of a function charged at its call
// sites: a call site is charged with its region whether the call runs or
// not (an error path's call too), so a large weight there would overcount
// (measured: with 4,096 the JSON kernel ticked so often it ran 1.15×
// slower).
const maxOwnWeight = 32

// funcWriter rewrites one function body.
type funcWriter struct {
	m      *module
	r      *wasmbin.Reader
	params uint32
	locals uint32 // declared locals, parameters included
	code   []byte // the rewritten instructions
	// Two locals are added after the declared ones: an i64, the counter
	// just computed (read back by the check instead of a reload of the
	// global), and an i32 (bulk memory weights) when tmp is set.
	tmp bool
	// ctrl holds the open blocks; regions the metered regions open: the
	// function's, then one per loop (paths.go).
	ctrl    []frame
	regions []region
	// own: the weight charged at the call sites (0: all at the entry);
	// leaf: no code at the entry;
	// calls: the body calls a function of the module, directly or not;
	// entryWeight: the weight of the function's region, once written;
	// callees: the functions of the module it calls directly.
	callees     []uint32
	own         uint32
	leaf        bool
	calls       bool
	entryWeight uint32
}

// region is a metered region: where its weight is to be patched in, and
// its paths so far (paths.go): the longest to the instruction being read
// (dist) and the longest seen (peak).
type region struct {
	patch      int
	dist, peak int64
	// A loop's check spans code[checkAt:checkEnd] until the loop is seen
	// to call a function of the module on every round (dropCheck); open
	// while nothing at the loop's top level could branch around a call.
	checkAt, checkEnd int
	open              bool
}

// maxWeight bounds a region's weight to what 4 bytes of LEB128 hold.
const maxWeight = 1<<27 - 1

func (f *funcWriter) rewrite(out []byte) ([]byte, error) {
	r := f.r
	groups, err := r.U32()
	if err != nil {
		return nil, fmt.Errorf("locals: %w", err)
	}
	localsStart := r.Off
	total := uint64(f.params)
	for g := uint32(0); g < groups; g++ {
		c, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("locals: %w", err)
		}
		total += uint64(c)
		if err := r.ValType(); err != nil {
			return nil, fmt.Errorf("locals: %w", err)
		}
	}
	if total >= 1<<32-2 {
		return nil, errors.New("too many locals")
	}
	f.locals = uint32(total)
	localsEnd := r.Off
	f.enterRegion()
	for !r.Done() {
		if err := f.instr(); err != nil {
			return nil, fmt.Errorf("at byte %d: %w", r.Off, err)
		}
	}
	if len(f.regions) != 0 {
		return nil, errors.New("body ends inside a block")
	}
	added := []byte{1, 0x7e} // one i64
	if f.tmp {
		added = append(added, 1, 0x7f) // one i32
	}
	out = wasmbin.AppendU32(out, groups+uint32(len(added)/2))
	out = append(out, r.B[localsStart:localsEnd]...)
	out = append(out, added...)
	return append(out, f.code...), nil
}

// enterRegion writes the metering code of a region's entry, its weight to
// be patched in at its end.
func (f *funcWriter) enterRegion() {
	if f.leaf && len(f.regions) == 0 {
		f.regions = append(f.regions, region{patch: -1})
		return
	}
	g := f.m.counter()
	c := append(f.code, 0x23)
	c = wasmbin.AppendU32(c, g) // global.get counter
	c = append(c, 0x42)         // i64.const weight
	f.regions = append(f.regions, region{patch: len(c)})
	c = appendPadded4(c, 0)
	c = append(c, 0x7d) // i64.sub
	r := &f.regions[len(f.regions)-1]
	r.checkAt = len(c)
	f.code = f.check(c)
	r.checkEnd, r.open = len(f.code), len(f.regions) > 1 // a loop's, not the function's
}

// dropCheck removes the check of the innermost loop, which calls a
// function of the module on every round before anything could branch: that
// function's entry checks (the loop is still charged). wazero reloads every
// global after a call, so a check after one costs a load more each round.
func (f *funcWriter) dropCheck() {
	r := &f.regions[len(f.regions)-1]
	set := wasmbin.AppendU32([]byte{0x24}, f.m.counter()) // global.set counter
	f.code = append(append(f.code[:r.checkAt], set...), f.code[r.checkEnd:]...)
	r.open = false
}

// check appends, the new counter on the stack: counter = that; while
// counter < 0, counter = tick(counter). The counter is kept in the added
// i64 local too: a loop header is a block of its own for wazero's
// compiler, where a global.get loads it again. The loop
// is for wazero's compiler: a call that returns to the code after it would
// merge two paths there, one where the call clobbered every register, and
// the hot path would pay for it; a branch back to a loop of its own leaves
// the code after it a single predecessor, the hot path.
func (f *funcWriter) check(c []byte) []byte {
	c = wasmbin.AppendU32(append(c, 0x22), f.locals) // local.tee t
	c = wasmbin.AppendU32(append(c, 0x24), f.m.counter())
	return f.checkLoop(c)
}

// checkLoop appends: while t < 0, counter = t = tick(t).
func (f *funcWriter) checkLoop(c []byte) []byte {
	g, t := f.m.counter(), f.locals
	c = append(c, 0x03, 0x40) // loop
	c = wasmbin.AppendU32(append(c, 0x20), t)
	c = append(c, 0x42, 0, 0x53, 0x04, 0x40) // i64.const 0, i64.lt_s, if
	c = wasmbin.AppendU32(append(c, 0x20), t)
	c = wasmbin.AppendU32(append(c, 0x10), f.m.tickFunc())
	c = wasmbin.AppendU32(append(c, 0x22), t) // local.tee t
	c = wasmbin.AppendU32(append(c, 0x24), g)
	return append(c, 0x0c, 1, 0x0b, 0x0b) // br to the loop, end if, end loop
}

// checkOnly appends the check of the counter as it is (nothing to
// subtract): while counter < 0, counter = tick(counter).
func (f *funcWriter) checkOnly(c []byte) []byte {
	c = wasmbin.AppendU32(append(c, 0x23), f.m.counter()) // global.get counter
	c = wasmbin.AppendU32(append(c, 0x21), f.locals)      // local.set t
	return f.checkLoop(c)
}

func (f *funcWriter) leaveRegion() {
	last := f.regions[len(f.regions)-1]
	f.regions = f.regions[:len(f.regions)-1]
	w := uint32(max(min(last.peak, maxWeight), 1))
	if len(f.regions) == 0 {
		f.entryWeight = w
		if f.own > 0 {
			// The first pass's weight (own, charged at the call sites) is
			// this one's without the weights of the callees charged at
			// theirs, which this pass adds: every path is as long or
			// longer. The entry charges the rest.
			w = uint32(max(min(last.peak, maxWeight)-int64(f.own), 0))
		}
	}
	switch {
	case last.patch < 0:
	case w == 0: // the function's entry: the check alone
		f.code = append(f.checkOnly(nil), f.code[last.checkEnd:]...)
	default:
		patchPadded4(f.code[last.patch:], w)
	}
}

// bulk writes, before a bulk memory or table operation whose count (of
// bytes, or of table entries) is on top of the stack, the code that
// charges its weight, the count shifted right by shift, and checks the
// counter.
func (f *funcWriter) bulk(shift byte) {
	f.tmp = true
	tmp, g := f.locals+1, f.m.counter()
	c := wasmbin.AppendU32(append(f.code, 0x22), tmp) // local.tee tmp
	c = wasmbin.AppendU32(append(c, 0x23), g)
	c = wasmbin.AppendU32(append(c, 0x20), tmp) // local.get tmp
	c = append(c, 0xad)                         // i64.extend_i32_u
	if shift > 0 {
		c = append(c, 0x42, shift, 0x88) // i64.const, i64.shr_u
	}
	f.code = f.check(append(c, 0x7d)) // i64.sub
}

// instr rewrites one instruction.
func (f *funcWriter) instr() error {
	r, m := f.r, f.m
	start := r.Off
	op, err := r.Byte()
	if err != nil {
		return err
	}
	if op != 0x0b && op != 0x05 { // an end or else counts itself, after the paths merge
		f.step(1)
	}
	if n := len(f.regions); n > 0 {
		switch op {
		case 0x02, 0x04, 0x05, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x03, 0x11, 0x13, 0x1f, 0x06:
			// a block, a branch, a return, an indirect call: a round may
			// go around what follows
			f.regions[n-1].open = false
		}
	}
	// Most instructions are copied as they are once their immediates are
	// skipped; those with a function index are written here and return.
	switch {
	case op == 0x02 || op == 0x04: // block, if
		err = f.blockType()
		f.openBlock(op == 0x04)
	case op == 0x03: // loop: its region starts inside it
		if err = f.blockType(); err != nil {
			return err
		}
		f.ctrl = append(f.ctrl, frame{loop: true, region: len(f.regions) - 1})
		f.code = append(f.code, r.B[start:r.Off]...)
		f.enterRegion()
		return nil
	case op == 0x05: // else
		f.elseArm()
	case op == 0x0b: // end
		f.code = append(f.code, op)
		if len(f.ctrl) == 0 { // the function's
			if len(f.regions) != 1 {
				return errors.New("end without a block")
			}
			f.step(1)
			f.leaveRegion()
			return nil
		}
		fr := f.ctrl[len(f.ctrl)-1]
		f.ctrl = f.ctrl[:len(f.ctrl)-1]
		if fr.loop {
			f.closeLoop()
		} else {
			f.closeBlock(fr)
		}
		return nil
	case op == 0x10 || op == 0x12 || op == 0xd2: // call, return_call, ref.func
		fn, err := r.U32()
		if err == nil && op != 0xd2 && fn < m.importedFuncs {
			f.step(HostCallWeight - 1) // the host's work
		}
		if err == nil && op == 0xd2 && fn < m.funcs {
			_, _ = m.escape(fn)
		}
		if err == nil && op != 0xd2 && fn >= m.importedFuncs && fn < m.funcs && len(f.regions) > 0 {
			f.calls = true
			f.callees = append(f.callees, fn)
			f.step(m.ownWeight(fn)) // the callee's entry region, when charged here
			if op == 0x10 && f.regions[len(f.regions)-1].open && !m.isLeaf(fn) {
				f.dropCheck()
			}
		}
		if err == nil {
			fn, err = m.remap(fn)
		}
		if err != nil {
			return err
		}
		if op == 0x12 {
			f.deadEnd()
		}
		f.code = wasmbin.AppendU32(append(f.code, op), fn)
		return nil
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect: type, table
		f.calls = true
		if op == 0x13 {
			defer f.deadEnd()
		}
		var t uint32
		if t, err = r.U32(); err == nil && t >= m.types {
			err = fmt.Errorf("type index %d out of range", t)
		}
		if err == nil {
			err = r.SkipLEB(5)
		}
	case op == 0x0c || op == 0x0d: // br, br_if
		var depth uint32
		if depth, err = r.U32(); err == nil {
			f.branch(depth)
		}
		if op == 0x0c {
			f.deadEnd()
		}
	case op == 0x0e: // br_table
		var n, depth uint32
		if n, err = r.U32(); err == nil {
			for i := uint64(0); i <= uint64(n) && err == nil; i++ {
				if depth, err = r.U32(); err == nil {
					f.branch(depth)
				}
			}
		}
		f.deadEnd()
	case op == 0x00 || op == 0x0f: // unreachable, return
		f.deadEnd()
	case op == 0x1c: // select t*
		var n uint32
		if n, err = r.U32(); err == nil {
			for i := uint32(0); i < n && err == nil; i++ {
				err = r.ValType()
			}
		}
	case op >= 0x20 && op <= 0x22: // local.get, set, tee
		var l uint32
		if l, err = r.U32(); err == nil && l >= f.locals {
			err = fmt.Errorf("local index %d out of range", l)
		}
	case op == 0x23 || op == 0x24: // global.get, set
		var g uint32
		if g, err = r.U32(); err == nil && g >= m.globals {
			err = fmt.Errorf("global index %d out of range", g)
		}
	case op == 0xfc:
		return f.prefixFC(start)
	default: // nothing to check or renumber: its immediates are skipped
		r.Off = start
		if _, err := r.Instr(); err != nil {
			return fmt.Errorf("opcode %#x cannot be metered (exceptions, GC and function references are not supported): %w", op, err)
		}
	}
	if err != nil {
		return fmt.Errorf("opcode %#x: %w", op, err)
	}
	f.code = append(f.code, r.B[start:r.Off]...)
	return nil
}

// ownWeight is the weight of the function fn's own entry region when it
// is charged at its call sites, 0 when at its entry (or in the first
// pass).
func (m *module) ownWeight(fn uint32) uint32 {
	if fn < m.importedFuncs || fn-m.importedFuncs >= uint32(len(m.own)) {
		return 0 // an import, the first pass, or a body that is missing
	}
	return m.own[fn-m.importedFuncs]
}

// isLeaf says whether the function fn has no check at its entry.
func (m *module) isLeaf(fn uint32) bool {
	return fn >= m.importedFuncs && fn-m.importedFuncs < uint32(len(m.leaf)) && m.leaf[fn-m.importedFuncs]
}

// blockType skips a block type: empty, a value type, or a type index.
func (f *funcWriter) blockType() error {
	c := f.r.B
	if f.r.Off < len(c) && (c[f.r.Off] == 0x63 || c[f.r.Off] == 0x64) {
		return f.r.ValType()
	}
	t, err := f.r.S33()
	if err != nil {
		return err
	}
	if t >= 0 && t >= int64(f.m.types) {
		return fmt.Errorf("type index %d out of range", t)
	}
	return nil
}

// prefixFC rewrites a 0xfc instruction: saturating truncations, bulk
// memory and table operations. Bulk operations are charged by size: one
// unit per 1<<BulkShift bytes, or per table entry.
func (f *funcWriter) prefixFC(start int) error {
	r := f.r
	r.Off = start
	in, err := r.Instr()
	if err != nil {
		return err
	}
	switch in.Sub {
	case 8, 10, 11: // memory.init, copy, fill: by the bytes
		f.bulk(BulkShift)
	case 12, 14, 17: // table.init, copy, fill: by the entries
		f.bulk(0)
	}
	f.code = append(f.code, r.B[start:r.Off]...)
	return nil
}
