// Package wasm runs plugins: WebAssembly modules that speak the cmdhost
// ABI (package abi), each version compiled once in a wazero runtime of its
// own and called on a bounded pool of instances (Engine.Load,
// Plugin.Invoke).
//
// # Limits
//
// A plugin is code the host does not trust: nothing it declares or does
// may kill the process or make it keep memory. Each instance is bounded by
// its PluginConfig:
//
//   - linear memory: MemoryPages (default 64 MiB), enforced by wazero;
//   - tables: TableEntries (default 65,536 entries, 512 KiB), the entries
//     of all the instance's tables together. wazero has no table limit, so
//     the host reads the module's table section before compiling it,
//     refuses tables whose minima exceed the limit, and rewrites each
//     table's maximum so that table.grow past the limit returns -1;
//   - the module: MaxModuleBytes (default 32 MiB), and bounds on its shape
//     (types, imports, functions, tables, globals, exports, element and
//     data segments, locals), since wazero spends memory on each item when
//     it compiles a module and, for some, in every instance. Only function
//     imports are accepted: the host provides nothing else;
//   - the call stack: wazero grows it up to ~84 MiB and then traps (stack
//     overflow); an instance does not keep a deep stack after a long call.
//
// A failed instance is discarded and let go at once; closing a plugin
// returns its memory to the operating system.
package wasm
