package ssa

import (
	"math/rand"
	"testing"

	"github.com/tetratelabs/wazero/internal/testing/require"
)

// cmdhost: subPassLoopDetection and passBuildLoopNestingForest answer as
// upstream's walks up the dominator tree did, on random graphs.
func TestCmdhostLoopPassesAsUpstream(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for range 300 {
		n := 2 + rng.Intn(40)
		edges := edgesCase{}
		for from := range n - 1 {
			edges[BasicBlockID(from)] = append(edges[BasicBlockID(from)], BasicBlockID(from+1)) // all reachable
			for range rng.Intn(3) {
				to := BasicBlockID(rng.Intn(n))
				if to != BasicBlockID(from+1) && (len(edges[BasicBlockID(from)]) < 2 || edges[BasicBlockID(from)][1] != to) {
					edges[BasicBlockID(from)] = append(edges[BasicBlockID(from)], to)
				}
			}
		}
		b := constructGraphFromEdges(edges)
		passCalculateImmediateDominators(b)
		ent := b.entryBlk()
		for blk := b.blockIteratorBegin(); blk != nil; blk = b.blockIteratorNext() {
			want := false
			for _, p := range blk.preds {
				want = want || b.isDominatedBy(p.blk, blk)
			}
			require.Equal(t, want, blk.loopHeader, "block %d of %v", blk.id, edges)
		}
		passBuildLoopNestingForest(b)
		for _, blk := range b.reversePostOrderedBasicBlocks {
			// upstream's walk
			want := b.dominators[blk.id]
			for !want.loopHeader && want != ent {
				want = b.dominators[want.id]
			}
			require.Equal(t, want, b.nearestLoopOf(b.dominators[blk.id], ent), "block %d of %v", blk.id, edges)
		}
	}
}

// cmdhost: the loop passes are linear in the dominator tree's depth. A
// chain of 300,000 blocks in one loop (what 100,000 nested blocks or
// 20,000 memory.fill become) took upstream's walks ~4.5·10^10 steps
// (minutes); here a few times 300,000.
func TestCmdhostLoopPassesOnADeepTree(t *testing.T) {
	const n = 300_000
	edges := edgesCase{n - 1: {1}}
	for from := range n - 1 {
		edges[BasicBlockID(from)] = []BasicBlockID{BasicBlockID(from + 1)}
	}
	b := constructGraphFromEdges(edges)
	passCalculateImmediateDominators(b)
	passBuildLoopNestingForest(b)
	require.Equal(t, 1, len(b.loopNestingForestRoots))
	header := b.loopNestingForestRoots[0].(*basicBlock)
	require.Equal(t, BasicBlockID(1), header.id)
	require.Equal(t, n-2, len(header.loopNestingForestChildren.View()))
}
