// Package plugins owns the plugins folder: it finds the plugins in it,
// loads them into the wasm engine, serves each command from the current
// version of the plugin that declares it, and hot-reloads a plugin when
// its file changes, without dropping a request.
//
// # The folder
//
// Every file NAME.wasm in the folder is the plugin NAME, and NAME.json its
// optional operator file (see Operator files); other files and dotfiles
// are ignored. A module describes its own commands (abi), so a
// lone .wasm file is enough. A command may be served by one plugin only:
// when two plugins declare it, the one already serving keeps it (at
// startup, the one whose file name sorts first) and the other is refused
// with an error naming both; it is retried when the command is freed.
//
// # Topics
//
// Topics belong to the host, not to plugins: a module may declare the
// request topic pattern of a command, but the host serves it only if it
// starts with a literal level that is neither '$'-prefixed (the broker's)
// nor HostTopicPrefix (the host's admin ops and events), and holds the
// level {executorId}, so that no plugin can answer for another executor
// or receive the host's admin ops. A module breaking that rule, or whose
// commands' topics overlap one another, is refused at load. A plugin whose
// topic overlaps that of a command another plugin serves is refused like a
// command name clash, naming both plugins and both patterns, and retried
// when that topic is freed. Refusing at load is what keeps routing whole:
// a refused plugin leaves everything else served. See CheckTopics.
//
// # Installing and replacing a plugin
//
// Write the new module to a temporary file in the same folder, whose name
// does not end in .wasm (for example NAME.wasm.tmp or .NAME.wasm), then
// rename it to NAME.wasm. A rename within one file system is atomic: the
// watcher never sees half a module. The Manager also waits until a file
// has been quiet for Config.Debounce before reading it, which covers a
// copy made in place, but only as long as the writer does not pause for
// longer than that; a half-written module would fail to load (and the old
// version would keep serving) until the rest of it arrives.
//
//	cp build/echo.wasm plugins/echo.wasm.tmp && mv plugins/echo.wasm.tmp plugins/echo.wasm
//
// A file is loaded again only when its content (sha256) changed; touching
// it does nothing. Deleting it stops serving its commands.
//
// # Operator files
//
// An optional NAME.json beside NAME.wasm holds the operator's settings for
// the plugin, which override the module's declared defaults and the
// host's (Config.Plugin and the host's flags):
//
//	{
//	  "enabled": true,
//	  "timeout": "2s",
//	  "onTimeout": "fail",
//	  "commands": {"echo": {"timeout": "500ms", "onTimeout": "retry", "retries": 2}},
//	  "concurrency": 4,
//	  "pool": 4,
//	  "memoryPages": 512,
//	  "tableEntries": 65536,
//	  "idleTimeout": "5m",
//	  "grants": {"env": {"REGION": "eu"}, "mounts": [{"host": "/srv/data", "guest": "/data", "readOnly": true}]},
//	  "config": {"greeting": "hi"},
//	  "secrets": {"apiKey": "/etc/cmdhost/secrets/echo-api-key"}
//	}
//
// Every field is optional. "enabled": false keeps the plugin from being
// served (its module is not loaded; Status says StateDisabled). "timeout"
// is the execution timeout of all its commands and a "commands" entry's
// that of one command (it wins); without either, the module's declared
// default applies, else the host's (Config.Defaults; TimeoutSource says
// which). "onTimeout" is the on_timeout policy, for all commands
// or, in a "commands" entry, for one (it wins): "fail" (the default)
// answers a call cut by its execution timeout with 408, "retry" runs it
// again, at most "retries" more times (1 to MaxTimeoutRetries), while the
// request's expiry leaves time. A retry that would apply to a command the
// module does not declare idempotent refuses the file. "concurrency"
// bounds each command's calls at once (default: "pool", else the host's).
// The manager resolves all of them once per command (Command, Resolve):
// the host serves what Commands returns. "pool", "memoryPages",
// "tableEntries" and "idleTimeout" set the wasm.PluginConfig fields of the
// same meaning; "grants.env" and "config"
// add to the host's values (the file's win), and so do "secrets", config
// values each read from a file the operator names, at every load
// (operator_secrets.go: never logged nor shown); "grants.mounts" replaces the
// host's mounts. See Operator.
//
// The file is strict JSON, read strictly (ParseOperator): no comments, no
// unknown or misspelt field (names are case-sensitive), no field twice, no
// null, durations as Go duration strings ("2s"), whole numbers of at least
// 1, mounts of existing absolute host directories, "retries" with "retry"
// only. A command named in "commands" must be one the module declares, and
// a retry policy may reach only idempotent ones (both checked once the
// module is loaded, Operator.CheckCommands). Each error names the file,
// the field and the fix:
//
//	echo.json: "timeout": "2 sec" is not a duration (e.g. "2s")
//
// The operator file is part of the plugin's content: a create, write,
// rename or remove of NAME.json reloads the plugin like a change of
// NAME.wasm (debounced, and only when the sha256 of either file changed),
// with a new version beside the old one, the atomic swap and the drain. An
// invalid operator file is refused like an invalid module: the old version
// keeps serving with its old settings, and the error is logged and shown
// by Status. Status.Digest stays the module's; Status.Operator and
// Status.OperatorDigest name the operator file in force and its sha256.
//
// # Reload never drops a request
//
// A new version is compiled, validated and warmed (wasm.Engine.Load) beside
// the old one, which keeps serving meanwhile. Then it is swapped in
// atomically: from that moment Manager.Lookup returns the new version. The
// calls in flight finish on the old version, which closes once they are
// done (or after Config.DrainTimeout, when the calls still running are
// stopped). A file that fails to load leaves the old version serving; the
// failure is logged and shown by Manager.Status.
//
// A caller may look up the old version just before a swap and call it just
// after the old version began to close: the call then fails with
// wasm.KindClosed without having run. The caller should look the command up
// once more and call the version found (see Manager.Lookup).
package plugins
