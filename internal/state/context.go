package state

import "context"

// A call's Txn travels in its context, from the executor that commits it
// to the engine's host functions that stage into it (and to the nested
// local calls the guest makes, whose writes then commit with the outer
// call's outcome). The wazero idiom for a call's host state is the
// context too; what the Txn holds is the call's own, not configuration.

type txnKey struct{}

// WithTxn returns ctx carrying tx.
func WithTxn(ctx context.Context, tx *Txn) context.Context {
	return context.WithValue(ctx, txnKey{}, tx)
}

// TxnFrom returns the Txn ctx carries, nil when none.
func TxnFrom(ctx context.Context) *Txn {
	tx, _ := ctx.Value(txnKey{}).(*Txn)
	return tx
}

// The namespaces' names: a plugin's own, and the shared ones an operator
// grants. The Azure IoT Operations state store protocol sees them as key
// prefixes (protocol.go).
const (
	pluginPrefix = "plugin/"
	sharedPrefix = "shared/"
)

// PluginNamespace is the namespace of plugin name.
func PluginNamespace(name string) string { return pluginPrefix + name }

// SharedNamespace is the shared namespace name.
func SharedNamespace(name string) string { return sharedPrefix + name }
