// Package clientcmd is the commands that talk to running hosts or run a
// module once: invoke, publish, call, watch, hosts and version, and the
// views they print.
package clientcmd
