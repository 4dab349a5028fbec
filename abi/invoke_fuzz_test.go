package abi_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/cmdhost/cmdhost/abi"
)

// The nested-invocation fuzz targets check what fuzz_test.go's do: no
// panic, failures wrap ErrMalformed, a canonical re-encoding, and no
// aliasing of the input (the host decodes an Invocation straight out of
// guest memory).

func normInvocation(inv *abi.Invocation) *abi.Invocation {
	n := *inv
	n.Branches = append([]abi.Branch(nil), inv.Branches...)
	for i := range n.Branches {
		b := &n.Branches[i]
		if len(b.Payload) == 0 {
			b.Payload = nil
		}
		if len(b.Metadata) == 0 {
			b.Metadata = nil
		}
	}
	return &n
}

func FuzzDecodeInvocation(f *testing.F) {
	seeds(f,
		abi.AppendInvocation(nil, fullInvocation()),
		abi.AppendInvocation(nil, &abi.Invocation{Branches: []abi.Branch{{Command: "x"}}}),
		cat(rec(1, recStr(2, "c")), rec(2, cat(recU8(1, 2), recU32(2, 1)))),
		cat(rec(1, recStr(2, "c")), rec(1, recStr(2, "c"))), // repeated (empty) name
		rec(1, cat(recStr(2, "c"), recU8(6, 1), recStr(4, "\xff"))),
		rec(2, recU8(4, 1)),
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		inv, err := abi.DecodeInvocation(in)
		if err != nil {
			if inv != nil {
				t.Fatalf("value returned with error %v", err)
			}
			if !errors.Is(err, abi.ErrMalformed) {
				t.Fatalf("error %q does not wrap ErrMalformed", err)
			}
			return
		}
		enc := abi.AppendInvocation(nil, inv)
		mutate(in)
		if after := abi.AppendInvocation(nil, inv); !bytes.Equal(after, enc) {
			t.Fatalf("decoded invocation aliases its input")
		}
		inv2, err := abi.DecodeInvocation(enc)
		if err != nil {
			t.Fatalf("re-encoded invocation does not decode: %v\n% x", err, enc)
		}
		if a, b := normInvocation(inv), normInvocation(inv2); !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the invocation\nfirst  %+v\nsecond %+v", a, b)
		}
		if enc2 := abi.AppendInvocation(nil, inv2); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding is not canonical:\n% x\n% x", enc, enc2)
		}
	})
}

func normInvocationResult(r *abi.InvocationResult) *abi.InvocationResult {
	n := *r
	n.Branches = append([]abi.BranchResult(nil), r.Branches...)
	for i := range n.Branches {
		b := &n.Branches[i]
		if len(b.Payload) == 0 {
			b.Payload = nil
		}
		if len(b.Metadata) == 0 {
			b.Metadata = nil
		}
	}
	return &n
}

func FuzzDecodeInvocationResult(f *testing.F) {
	seeds(f,
		abi.AppendInvocationResult(nil, fullInvocationResult()),
		abi.AppendInvocationResult(nil, &abi.InvocationResult{Failure: abi.ReasonUnavailable, Message: "off"}),
		rec(3, cat(recU8(2, 9), recU8(3, 200))), // unknown outcome and reason values are kept
		rec(3, recU8(5, 2)),                     // bad boolean
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		r, err := abi.DecodeInvocationResult(in)
		if err != nil {
			if r != nil {
				t.Fatalf("value returned with error %v", err)
			}
			if !errors.Is(err, abi.ErrMalformed) {
				t.Fatalf("error %q does not wrap ErrMalformed", err)
			}
			if _, serr := abi.DecodeInvocationResultShared(data); serr == nil {
				t.Fatal("the shared decoder accepts what the copying one refuses")
			}
			return
		}
		enc := abi.AppendInvocationResult(nil, r)
		mutate(in)
		if after := abi.AppendInvocationResult(nil, r); !bytes.Equal(after, enc) {
			t.Fatalf("decoded result aliases its input")
		}
		r2, err := abi.DecodeInvocationResultShared(enc)
		if err != nil {
			t.Fatalf("re-encoded result does not decode: %v\n% x", err, enc)
		}
		if a, b := normInvocationResult(r), normInvocationResult(r2); !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the result\nfirst  %+v\nsecond %+v", a, b)
		}
		if enc2 := abi.AppendInvocationResult(nil, r2); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding is not canonical:\n% x\n% x", enc, enc2)
		}
	})
}
