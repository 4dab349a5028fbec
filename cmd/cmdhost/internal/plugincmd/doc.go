// Package plugincmd is cmdhost plugin: inspect and validate module files;
// list, install, reload, remove and roll back a host's or a fleet's
// plugins and wait for their verdict; roll out across a fleet; push, pull
// and sign modules.
package plugincmd
