// Package plugins owns the plugins folder: it finds the plugins in it,
// loads them into the wasm engine, serves each command from the current
// version of the plugin that declares it, and hot-reloads a plugin when
// its file changes, without dropping a request.
//
// # The folder
//
// Every file NAME.wasm in the folder is the plugin NAME; other files and
// dotfiles are ignored. A module describes its own commands (abi), so a
// lone .wasm file is enough. A command may be served by one plugin only:
// when two plugins declare it, the one already serving keeps it (at
// startup, the one whose file name sorts first) and the other is refused
// with an error naming both; it is retried when the command is freed.
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
