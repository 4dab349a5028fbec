//go:build !wasip1

package sdk

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cmdhost/cmdhost/abi"
)

// The state store's stand-in for handlers built and tested natively: in
// memory, every write visible at once (there is no call to commit with),
// conditions and bounds as the host checks them, expiry ignored.
var stateStandin struct {
	mu      sync.Mutex
	version uint64
	spaces  map[string]map[string]standinItem
}

type standinItem struct {
	value   []byte
	version uint64
}

// ResetTestState empties the state store's stand-in (native builds).
func ResetTestState() {
	stateStandin.mu.Lock()
	defer stateStandin.mu.Unlock()
	stateStandin.spaces = nil
}

func standinSpace(ns string) map[string]standinItem {
	if stateStandin.spaces == nil {
		stateStandin.spaces = map[string]map[string]standinItem{}
	}
	m := stateStandin.spaces[ns]
	if m == nil {
		m = map[string]standinItem{}
		stateStandin.spaces[ns] = m
	}
	return m
}

func hostStateGet(ns, key string, buf []byte, version *uint64) abi.Result {
	stateStandin.mu.Lock()
	defer stateStandin.mu.Unlock()
	if key == "" {
		return abi.ResultInvalid
	}
	it, ok := standinSpace(ns)[key]
	if !ok {
		return abi.ResultNotFound
	}
	*version = it.version
	copy(buf, it.value)
	return abi.Result(len(it.value))
}

func hostStateSet(ns, key string, value []byte, ttl int64, ifVersion uint64, flags int32) abi.Result {
	stateStandin.mu.Lock()
	defer stateStandin.mu.Unlock()
	if key == "" || ttl < 0 || flags&^abi.StateIfAbsent != 0 {
		return abi.ResultInvalid
	}
	m := standinSpace(ns)
	cur, ok := m[key]
	if (flags&abi.StateIfAbsent != 0 && ok) || (ifVersion != 0 && (!ok || cur.version != ifVersion)) {
		return abi.ResultConflict
	}
	stateStandin.version++
	m[key] = standinItem{value: append([]byte{}, value...), version: stateStandin.version}
	return abi.ResultOK
}

func hostStateDelete(ns, key string, ifVersion uint64) abi.Result {
	stateStandin.mu.Lock()
	defer stateStandin.mu.Unlock()
	if key == "" {
		return abi.ResultInvalid
	}
	m := standinSpace(ns)
	cur, ok := m[key]
	if ifVersion != 0 && (!ok || cur.version != ifVersion) {
		return abi.ResultConflict
	}
	delete(m, key)
	if ok {
		return 1
	}
	return 0
}

func hostStateAdd(ns, key string, delta int64) (int64, abi.Result) {
	stateStandin.mu.Lock()
	defer stateStandin.mu.Unlock()
	if key == "" {
		return 0, abi.ResultInvalid
	}
	m := standinSpace(ns)
	var n int64
	if cur, ok := m[key]; ok {
		var err error
		if n, err = strconv.ParseInt(string(cur.value), 10, 64); err != nil {
			return 0, abi.ResultNotInteger
		}
	}
	if (delta > 0 && n > math.MaxInt64-delta) || (delta < 0 && n < math.MinInt64-delta) {
		return 0, abi.ResultNotInteger
	}
	n += delta
	stateStandin.version++
	m[key] = standinItem{value: strconv.AppendInt(nil, n, 10), version: stateStandin.version}
	return n, abi.ResultOK
}

func hostStateList(ns, prefix, after string, buf []byte) abi.Result {
	stateStandin.mu.Lock()
	defer stateStandin.mu.Unlock()
	var keys []string
	for k := range standinSpace(ns) {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var page []byte
	more := false
	for i, k := range keys {
		if i == abi.StateListMax || len(page)+5+len(k)+6 > len(buf) {
			more = true
			break
		}
		page = append(page, abi.StateListKey)
		page = binary.LittleEndian.AppendUint32(page, uint32(len(k)))
		page = append(page, k...)
	}
	if more {
		if len(page) == 0 {
			return abi.ResultTooSmall
		}
		page = append(page, abi.StateListMore, 1, 0, 0, 0, 1)
	}
	copy(buf, page)
	return abi.Result(len(page))
}
