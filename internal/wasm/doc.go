// Package wasm runs plugins: WebAssembly modules that speak the cmdhost
// ABI (package abi), each version compiled once in a wazero runtime of its
// own and called on a bounded pool of instances (Engine.Load,
// Plugin.Invoke).
//
// It exists so that the rest of the host can treat a module as a function
// from abi.Request to abi.Response with a deadline, and never see wazero,
// guest memory or a guest's faults: whatever a guest does, Invoke returns a
// Response or an Error whose Kind says what happened.
//
// # Concepts
//
//   - Engine: what outlives one plugin version, the compilation cache and
//     each plugin's Vars. A host has one.
//   - Plugin: one loaded version of a module, with its own wazero runtime,
//     so closing it returns everything it compiled and allocated. Loading
//     checks the module's size and shape, runs its initializer and its
//     describe export under PluginConfig.LoadTimeout, and keeps the
//     abi.Description it declared. A new version of a file is a new Plugin;
//     Close lets the old one's calls in flight finish, and a call that comes
//     after it fails with KindClosed.
//   - Instances: each Invoke takes an instance from the plugin's pool
//     (PluginConfig.PoolSize bounds them, and so the plugin's concurrency),
//     waiting for one until the call's deadline. An instance serves one call
//     at a time and keeps nothing of it. An instance whose call failed in
//     any way but KindUnknownCommand is discarded, never reused, so a
//     guest's broken state cannot reach the next call. Instances idle for
//     PluginConfig.IdleTimeout are released; the next call makes one afresh.
//   - Deadlines and cancels: the call's context closes the guest's module
//     (wazero's close on context done), and the guest's compiled code tests
//     the module's closing at every function entry and loop header and
//     after each bulk operation, inline
//     (cmdhost's copy of wazero: third_party/wazero/CMDHOST.md), so a guest
//     in an endless loop stops at its deadline or cancel; the error is
//     KindDeadline or KindCanceled. A plugin that counts fuel is metered
//     instead (metering.go): its tick checks the deadline.
//   - What a guest may reach: its memory, the host functions of package abi
//     (config values, the plugin's variables shared by all its instances,
//     logging, nested calls through a Nester) and what its Grants give;
//     the zero Grants give no filesystem, no environment and no network.
//     A mount (Grants.Mounts) cannot be left: the guest's file calls go
//     through an os.Root on the directory (mountFS), so no path, "..",
//     symlink, hard link, rename or symlink swapped in mid-call reaches
//     outside it; symlinks the guest makes must point down (relative, no
//     ".."), and a read-only mount refuses every write (EROFS, EBADF).
//   - Errors: every failure is an *Error with a Kind (KindOf), which callers
//     map to protocol statuses; Stats counts calls, failures, replaced
//     instances and latencies per plugin.
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
//     imports are accepted: the host provides nothing else. Within a
//     section, no vector, name or data segment may declare more items than
//     the bytes left could hold (cmdhost's copy of wazero checks it before
//     making anything of that size: TestAllocationBombsRefused);
//   - its compilation: the compile weight of each function and of all of
//     them (modlimits.go, compileWeight: about 1 KiB of the compiler's
//     memory a unit), since wazero's compiler spends more than linear time
//     on a function's blocks, and CompileTimeout (default 1 minute of the
//     compiling thread's CPU time: compilebudget.go), past which the
//     compile stops at the end of the function it is compiling and the
//     module is refused;
//   - the call stack: wazero grows it while the stack and the one it grows
//     from together fit in 8 MiB (cmdhost's copy of wazero; ~5 MiB of
//     stack, ~130,000 frames of a small function) and then traps (stack
//     overflow); the guest memory budget reserves the 8 MiB for each
//     instance, and an instance does not keep a deep stack after a long
//     call.
//
// A failed instance is discarded and let go at once; closing a plugin
// returns its memory to the operating system.
package wasm
