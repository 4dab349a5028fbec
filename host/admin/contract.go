// Package admin is the contract of a cmdhost's own admin ops and a Go
// client for them: what an operator's tool, an embedder, or `cmdhost
// plugin list/reload/remove/install/rollback/rollout`, `cmdhost hosts`,
// `cmdhost watch` and `cmdhost version --executor` use to ask a running
// host about its plugins and to install, roll back, reload or remove one.
//
// A host serves its admin ops over the same RPC protocol as its plugins'
// commands, on executor-specific topics: cmdhost/{executorId}/admin/{op}
// (Topic). Reading ops (list, inspect, stats, state-namespaces) are open;
// ops that change state (reload, remove, install, rollback) and those
// that read or write the state store's keys (state.go) need the token
// `serve --admin-token-file` holds,
// sent as the request's user property cmdhost-admin-token (TokenKey) and
// compared in constant time; without a token set, or with a wrong one,
// they are refused (StatusForbidden) and the host logs who was refused
// and why, never the token. The token is a guard
// against mistakes, not a security boundary: who may publish to
// cmdhost/# is for the broker's ACLs to decide.
//
// Replicas (serve --share GROUP: hosts with one executor id, each its own
// MQTT client id) split the ops of those topics as they split requests:
// one replica answers, and names itself in its reply (ReplicaID). Each
// replica also serves every op on topics of its own,
// cmdhost/{executorId}/replica/{clientId}/admin/{op} (ReplicaTopic), and
// announces itself every AnnounceInterval on cmdhost/{executorId}/replicas
// (ReplicasTopic), so that a client can find them all and ask each.
//
// The types here are the ops' requests and replies as JSON; the host's
// side of the ops lives in the host (internal/adminops), and both import
// this package, so that the contract is written once.
package admin

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/cache"
	"github.com/cmdhost/cmdhost/internal/buildinfo"
	"github.com/cmdhost/cmdhost/plugins"
)

// The admin ops.
const (
	OpList    = "list"    // every plugin (PluginView), open
	OpInspect = "inspect" // one plugin (PluginView) with its commands' settings, open
	OpStats   = "stats"   // the plugins, the reuse cache and the host's version (Stats), open
	OpReload  = "reload"  // reload a plugin from its file (PluginView), needs the token
	OpRemove  = "remove"  // stop serving a plugin (or clear one that failed) and delete its file, needs the token
	// OpInstall serves a module sent in the request (InstallKeys; in
	// chunks when it is larger than a packet) and answers with the
	// host's Verdict; needs the token.
	OpInstall = "install"
	// OpRollback serves again the version of a plugin that its last
	// install replaced (Request; a Verdict); needs the token. With
	// Request.Reject it also forgets the version it replaces.
	OpRollback = "rollback"
)

// The user properties of an install request, whose payload is a chunk of
// the module: the plugin's name, the hex sha256 of the whole module, its
// size in bytes and the chunk's offset in it. The chunks of one module
// are sent in order, each once the host answered the one before
// (InstallProgress); the last one's answer is the Verdict. A chunk at
// offset 0 starts the upload again.
const (
	InstallNameKey   = "cmdhost-install-name"
	InstallDigestKey = "cmdhost-install-digest"
	InstallSizeKey   = "cmdhost-install-size"
	InstallOffsetKey = "cmdhost-install-offset"
	// InstallSignatureKey carries the module's signature file (a host
	// with serve --trust serves only signed modules; cmdhost plugin
	// sign), on the last chunk; none: unsigned.
	InstallSignatureKey = "cmdhost-install-signature"
	// InstallReferenceKey asks the host to pull the module itself from
	// an OCI registry (oci://REGISTRY/REPO[:TAG|@sha256:…], with its own
	// registry credentials: serve --registry-*), in place of chunks: the
	// request has no payload and no other install property but the name.
	InstallReferenceKey = "cmdhost-install-ref"
)

// InstallProgress answers a chunk of an install that is not the last:
// how many bytes of the module the host holds.
type InstallProgress struct {
	Received int `json:"received"`
}

// Verdict is a host's answer to install or rollback: the module served
// (Served, with its commands), or refused with the host's reason, while
// the version serving before, if any, goes on serving.
type Verdict struct {
	// ReplicaID is the host that answered.
	ReplicaID
	Name   string `json:"name"`
	Digest string `json:"digest"` // hex sha256 of the module
	Served bool   `json:"served"`
	// Commands are the commands the module serves (served only).
	Commands []string `json:"commands,omitempty"`
	// Reason is why the host refused it (refused only).
	Reason string `json:"reason,omitempty"`
	// Previous is the hex sha256 of the version kept for a rollback; ""
	// when none is kept.
	Previous string `json:"previous,omitempty"`
}

// TokenKey is the request user property that carries the admin token.
const TokenKey = "cmdhost-admin-token"

// Topic returns the request topic of an admin op.
func Topic(executorID, op string) string {
	return plugins.HostTopicPrefix + "/" + executorID + "/admin/" + op
}

// ReplicaTopic returns the request topic of an admin op of one replica,
// the one whose MQTT client id is clientID: every replica serves its ops
// there too, so that a client can ask each (Client.ForReplica).
func ReplicaTopic(executorID, clientID, op string) string {
	return plugins.HostTopicPrefix + "/" + executorID + "/replica/" + clientID + "/admin/" + op
}

// ReplicasTopic is the topic on which each replica of a share group
// announces itself (a ReplicaID as JSON, telemetry) every
// AnnounceInterval; Client.Replicas receives them.
func ReplicasTopic(executorID string) string {
	return plugins.HostTopicPrefix + "/" + executorID + "/replicas"
}

// AnnounceInterval is how often a replica of a share group announces
// itself on ReplicasTopic. A client that has heard nothing from a replica
// for three intervals takes it for gone; one that looks for the replicas
// listens for DiscoveryWindow.
const AnnounceInterval = time.Second

// DiscoveryWindow is how long a client listens to ReplicasTopic to find
// every replica of a group: two announcements of each.
const DiscoveryWindow = 2*AnnounceInterval + AnnounceInterval/2

// ReplicaID names the host that answered an op: its MQTT client id and,
// for a replica, its share group. Each reply that describes a host (list,
// inspect, stats) carries it, so that a client of a group can say which
// replica it shows.
type ReplicaID struct {
	// ClientID is the host's MQTT client id (serve --client-id, by
	// default its executor id).
	ClientID string `json:"replica,omitempty"`
	// Share is its share group (serve --share); "" for a lone host.
	Share string `json:"share,omitempty"`
}

// EventsTopic is the topic of an executor's timeout events, JSON
// telemetry it publishes with serve --events (Client.Events receives
// them).
func EventsTopic(executorID string) string {
	return plugins.HostTopicPrefix + "/" + executorID + "/events"
}

// StatusForbidden refuses an admin op that needs the token.
const StatusForbidden abi.Status = 403

// PluginView is a plugin as the admin ops report it: its status and the
// latency of its current version's last calls.
//
// Its paths (File, Operator, and those in LastError) are relative to the
// host's plugins folder, whose absolute path the ops do not reveal (the
// operator knows it; anyone else who can reach the broker need not);
// Folder tells a client which folder it is without naming it.
type PluginView struct {
	plugins.PluginStatus
	// ReplicaID is the host that answered.
	ReplicaID
	// Folder is FolderID of the host's plugins folder.
	Folder string  `json:"folder,omitempty"`
	P50Ms  float64 `json:"p50Ms"`
	P99Ms  float64 `json:"p99Ms"`
	// StateKeys and StateBytes are what the plugin's state namespace
	// holds: its keys, and their bytes (keys plus values); 0 on a host
	// without a state store.
	StateKeys  int64 `json:"stateKeys"`
	StateBytes int64 `json:"stateBytes"`
	// Declared are the commands with their settings (inspect only).
	Declared []abi.Command `json:"declared,omitempty"`
	// Timeouts are the commands' execution timeouts as served, where each
	// comes from, and their on_timeout policies, sorted by command name
	// (inspect only).
	Timeouts []CommandTimeout `json:"timeouts,omitempty"`
}

// CommandTimeout is a command's TimeoutView, named.
type CommandTimeout struct {
	Command string `json:"command"`
	TimeoutView
}

// TimeoutView shows how a command is served when a call runs long: its
// execution timeout, the setting it comes from (operator file per command
// or per plugin, module, host default) and its on_timeout policy. The
// request's expiry caps the timeout at run time.
type TimeoutView struct {
	// EffectiveTimeout is a Go duration, "0s" when there is none (the
	// request's expiry alone); "" when it is the host's default and that
	// is not known.
	EffectiveTimeout string                `json:"effectiveTimeout,omitempty"`
	TimeoutSource    plugins.TimeoutSource `json:"timeoutSource"`
	OnTimeout        string                `json:"onTimeout"` // "fail" or "retry"
	Retries          int                   `json:"retries,omitempty"`
}

// NewTimeoutView returns the view of the command c.
func NewTimeoutView(c plugins.Command) TimeoutView {
	return TimeoutView{EffectiveTimeout: c.Timeout.String(), TimeoutSource: c.TimeoutSource,
		OnTimeout: string(c.OnTimeout.Policy()), Retries: c.OnTimeout.Retries}
}

// Stats is what the stats op reports.
type Stats struct {
	// ReplicaID is the host that answered.
	ReplicaID
	Plugins []PluginView     `json:"plugins"`
	Reuse   cache.ReuseStats `json:"reuse"`
	// Build is the host binary's version, for `cmdhost version
	// --executor`: the binary run there may not be the one at hand.
	Build buildinfo.Version `json:"build"`
	// Started is when the host started serving its admin ops (uptime);
	// zero from a host that does not say.
	Started time.Time `json:"started,omitzero"`
	// MaxRequestBytes is the largest request the host takes (serve
	// --max-request-bytes) and MaxModuleBytes the largest module it loads
	// (serve --max-module-size): an install's chunks fit the first, its
	// module the second. 0 from a host that does not say.
	MaxRequestBytes int `json:"maxRequestBytes,omitempty"`
	MaxModuleBytes  int `json:"maxModuleBytes,omitempty"`
}

// FolderID names the plugins folder dir without revealing its path: a
// digest of its absolute path, symbolic links resolved. A client on the
// host's machine compares it with its own folder's to tell whether the
// host serves that folder. "" when dir cannot be resolved.
func FolderID(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte("cmdhost plugins folder\x00" + abs))
	return hex.EncodeToString(sum[:16])
}

// Request is the payload of inspect, reload, remove and rollback.
type Request struct {
	Name string `json:"name"`
	// Reject, for rollback, drops the version rolled back from instead of
	// keeping it for the next rollback: the version kept before it is
	// kept again (a rollout rolling back a version it found bad;
	// Client.Reject). A host that predates it ignores it: its Verdict's
	// Previous is then the version rolled back from.
	Reject bool `json:"reject,omitempty"`
}
