// Package devcmd is the handler developer's loop: cmdhost new (a project
// from the templates in template/), cmdhost build (as the project's
// manifest, cmdhost.json, says) and cmdhost dev (rebuild and install on
// every change, with the host's verdict).
package devcmd
