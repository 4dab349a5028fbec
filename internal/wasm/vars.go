package wasm

import (
	"math"
	"strconv"
	"sync"

	"github.com/cmdhost/cmdhost/abi"
)

// VarLimits bound one plugin's variables.
type VarLimits struct {
	MaxKeys       int // default 1024
	MaxKeyBytes   int // default 256
	MaxValueBytes int // default 64 KiB
	MaxTotalBytes int // keys plus values; default 1 MiB
}

func (l VarLimits) withDefaults() VarLimits {
	if l.MaxKeys <= 0 {
		l.MaxKeys = 1024
	}
	if l.MaxKeyBytes <= 0 {
		l.MaxKeyBytes = 256
	}
	if l.MaxValueBytes <= 0 {
		l.MaxValueBytes = 64 << 10
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = 1 << 20
	}
	return l
}

// Vars are one plugin's variables: kept by the host, shared by every
// instance and version of the plugin, bounded in size. One mutex guards the
// map; operations are short and make var_add atomic across instances.
type Vars struct {
	limits VarLimits
	mu     sync.Mutex
	m      map[string][]byte
	total  int
}

func newVars(l VarLimits) *Vars {
	return &Vars{limits: l.withDefaults(), m: make(map[string][]byte)}
}

// Get returns a copy of the value of key.
func (v *Vars) Get(key string) ([]byte, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	val, ok := v.m[key]
	return append([]byte(nil), val...), ok
}

// Set stores a copy of val under key.
func (v *Vars) Set(key string, val []byte) abi.Result {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.setLocked(key, append([]byte(nil), val...))
}

// Add adds delta to the decimal integer under key (absent = 0).
func (v *Vars) Add(key string, delta int64) (int64, abi.Result) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var n int64
	if cur, ok := v.m[key]; ok {
		var err error
		if n, err = strconv.ParseInt(string(cur), 10, 64); err != nil {
			return 0, abi.ResultNotInteger
		}
	}
	if (delta > 0 && n > math.MaxInt64-delta) || (delta < 0 && n < math.MinInt64-delta) {
		return 0, abi.ResultTooLarge
	}
	n += delta
	if r := v.setLocked(key, strconv.AppendInt(nil, n, 10)); r != abi.ResultOK {
		return 0, r
	}
	return n, abi.ResultOK
}

// Len returns the number of variables and their total size.
func (v *Vars) Len() (keys, bytes int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.m), v.total
}

func (v *Vars) setLocked(key string, val []byte) abi.Result {
	if len(key) == 0 {
		return abi.ResultInvalid
	}
	if len(key) > v.limits.MaxKeyBytes || len(val) > v.limits.MaxValueBytes {
		return abi.ResultTooLarge
	}
	old, exists := v.m[key]
	total := v.total + len(val)
	if exists {
		total -= len(old)
	} else {
		total += len(key)
		if len(v.m) >= v.limits.MaxKeys {
			return abi.ResultLimit
		}
	}
	if total > v.limits.MaxTotalBytes {
		return abi.ResultLimit
	}
	v.m[key] = val
	v.total = total
	return abi.ResultOK
}
