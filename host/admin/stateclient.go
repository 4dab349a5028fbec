package admin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cmdhost/cmdhost/internal/state"
)

// StateNamespaces returns the namespaces of the host's state store with
// their sizes.
func (c *Client) StateNamespaces(ctx context.Context) (StateNamespaces, error) {
	var out StateNamespaces
	err := c.decode(ctx, OpStateNamespaces, nil, &out, "the host's state namespaces")
	return out, err
}

// StateGet returns the key of namespace ns; it needs the token. A key
// that is not there is a *HostError with status 404.
func (c *Client) StateGet(ctx context.Context, ns string, key []byte) (StateItem, error) {
	var out StateItem
	err := c.decode(ctx, OpStateGet, StateKeyRequest{Namespace: ns, StateKey: KeyOf(key)}, &out, "the host's state item")
	return out, err
}

// StateList returns a page of the keys of req.Namespace; it needs the
// token.
func (c *Client) StateList(ctx context.Context, req StateListRequest) (StatePage, error) {
	var out StatePage
	err := c.decode(ctx, OpStateList, req, &out, "the host's page of state keys")
	return out, err
}

// StateSet sets a key and returns its version; it needs the token. A
// condition that does not hold is a *HostError with status 409.
func (c *Client) StateSet(ctx context.Context, req StateSetRequest) (StateSetResult, error) {
	var out StateSetResult
	err := c.decode(ctx, OpStateSet, req, &out, "the host's answer to a state set")
	return out, err
}

// StateDelete deletes a key (only if its version is ifVersion, when not
// 0) and says whether it existed; it needs the token.
func (c *Client) StateDelete(ctx context.Context, ns string, key []byte, ifVersion uint64) (StateDeleteResult, error) {
	var out StateDeleteResult
	err := c.decode(ctx, OpStateDelete, StateKeyRequest{Namespace: ns, StateKey: KeyOf(key), IfVersion: ifVersion}, &out,
		"the host's answer to a state delete")
	return out, err
}

// StateImport sets a batch of keys of ns in one commit of the host's
// store, all or none; it needs the token. Batches splits a larger import
// into such batches.
func (c *Client) StateImport(ctx context.Context, ns string, items []StateItem) (StateImported, error) {
	var out StateImported
	err := c.decode(ctx, OpStateImport, StateImportRequest{Namespace: ns, Items: items}, &out, "the host's answer to a state import")
	return out, err
}

// importOverhead is what an import request carries besides its items'
// JSON: topic, correlation data, response topic, properties, the
// namespace.
const importOverhead = 16 << 10

// Batches splits items into the batches of StateImport: each at most
// state.DefaultMaxCommitOps keys and state.DefaultMaxCommitBytes of keys
// and values (the store's bounds of one commit), and its request within
// the broker's packet limit and the host's (Stats.MaxRequestBytes; 0:
// the default). It returns the index in items where each batch starts,
// and an error naming the first item that fits no request.
func (c *Client) Batches(items []StateItem, maxRequestBytes int) ([]int, error) {
	limit, err := chunkSize(c.inv.PacketLimit(), maxRequestBytes, len(c.cfg.Token))
	if err != nil {
		return nil, err
	}
	return batches(items, limit-importOverhead)
}

// batches splits items as Batches does, each batch's JSON at most limit
// bytes.
func batches(items []StateItem, limit int) ([]int, error) {
	var starts []int
	n, size, data := 0, 0, 0
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		key, _ := it.StateKey.Bytes()
		value, _ := it.StateValue.Bytes()
		if len(b)+1 > limit {
			return nil, fmt.Errorf("item %d (key %.64q) is %d bytes of JSON, more than a request to the host may carry (%d)", i+1, key, len(b), limit)
		}
		if n == 0 || n == state.DefaultMaxCommitOps || size+len(b)+1 > limit || data+len(key)+len(value) > state.DefaultMaxCommitBytes {
			starts = append(starts, i)
			n, size, data = 0, 0, 0
		}
		n++
		size += len(b) + 1
		data += len(key) + len(value)
	}
	return starts, nil
}
