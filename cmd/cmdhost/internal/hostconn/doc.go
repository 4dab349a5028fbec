// Package hostconn is how the client commands reach a running host or a
// fleet of them: the broker flags and their credentials, the invoker of a
// host's commands, the admin client (one host, its replicas, or every
// host matching a pattern) and what a refused or silent broker means.
package hostconn
