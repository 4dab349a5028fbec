package hostconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/redact"
	"github.com/cmdhost/cmdhost/internal/rpc"
	"github.com/cmdhost/cmdhost/internal/secret"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/topic"
)

// The plugin subcommands that talk to a running host go through its admin
// ops over MQTT, with the client of package host/admin.

func HostFlags() []cli.Flag {
	return append(TargetFlags("MQTT broker `URL`", "executor id of the host (default: the host name)"),
		&cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for the host"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"})
}

// TargetFlags are the flags that name the host a client talks to, --broker
// and --executor (with their usage texts), and how to log in to the broker.
func TargetFlags(brokerUsage, executorUsage string) []cli.Flag {
	return append([]cli.Flag{
		BrokersFlag(brokerUsage, "mqtt://"+DefaultListen),
		&cli.StringFlag{Name: "executor", Usage: executorUsage, EnvVars: []string{"CMDHOST_EXECUTOR", "CMDHOST_ID"}},
	}, AuthFlags()...)
}

// AllFlag asks every replica of a share group instead of whichever
// answers (plugin list, watch).
func AllFlag() cli.Flag {
	return &cli.BoolFlag{Name: "all", Usage: "show every replica of the host's share group (serve --share), each found by its announcements within " + admin.DiscoveryWindow.String()}
}

// TokenFlags give the host's admin token to the ops that need it: from a
// file or CMDHOST_ADMIN_TOKEN; --token, its value on the command line
// (which ps shows), is kept for compatibility, with a warning.
func TokenFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "token-file", Usage: "`FILE` holding the host's admin token (serve --admin-token-file); or the variable " + EnvAdminToken, EnvVars: []string{"CMDHOST_ADMIN_TOKEN_FILE"}},
		&cli.StringFlag{Name: "token", Usage: "the admin token itself: shown by ps, kept for compatibility (a warning says so); use --token-file"},
	}
}

// AdminToken is the token of c's --token-file, --token or
// CMDHOST_ADMIN_TOKEN; "" when none is given.
func AdminToken(c *cli.Context) (string, error) {
	file, tok := c.String("token-file"), c.String("token")
	switch {
	case file != "" && tok != "":
		return "", cli.Exit("--token-file and --token both give the admin token: keep --token-file", base.ExitUsage)
	case file != "":
		t, err := secret.ReadFile(file)
		if err != nil {
			return "", cli.Exit(fmt.Sprintf("--token-file: %v", err), base.ExitUsage)
		}
		return t, nil
	case tok != "":
		fmt.Fprintln(c.App.ErrWriter, "warning: --token shows the token to anyone who can list processes (ps): give it with --token-file FILE or "+EnvAdminToken+" instead")
		return tok, nil
	}
	return os.Getenv(EnvAdminToken), nil
}

// AdminHost is a connection to the broker for the admin ops of one host.
type AdminHost struct {
	Broker   *url.URL
	Executor string
	Client   *admin.Client
}

// DialAdmin connects to the --broker of c for the admin ops of the host
// --executor names, sending token with each (none when ""). Close it.
func DialAdmin(c *cli.Context, token string) (*AdminHost, error) {
	us, auth, executor, err := hostTarget(c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(c.Context, connectWait)
	defer cancel()
	client, err := admin.Dial(ctx, admin.ClientConfig{Broker: us[0], Failover: us[1:], Auth: auth, ExecutorID: executor, Token: token})
	if err != nil {
		return nil, ConnectError(err)
	}
	return &AdminHost{Broker: us[0], Executor: executor, Client: client}, nil
}

func (h *AdminHost) Close() { _ = h.Client.Close() }

// AdminCall runs one admin op on the host the flags name and returns the
// reply's JSON.
func AdminCall(c *cli.Context, op string, req any) ([]byte, error) {
	var token string // sent only with the ops that need it
	if op == admin.OpReload || op == admin.OpRemove {
		var err error
		if token, err = AdminToken(c); err != nil {
			return nil, err
		}
	}
	h, err := DialAdmin(c, token)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return h.Call(c.Context, op, req, c.Duration("timeout"))
}

// Call runs one admin op, with req as its JSON payload (none when nil),
// and returns the reply's JSON. It gives up as invoke does (client.go): a
// host that does not acknowledge the op in the ack window is not running.
func (h *AdminHost) Call(ctx context.Context, op string, req any, timeout time.Duration) ([]byte, error) {
	return h.CallOn(ctx, h.Client, op, req, timeout)
}

// CallOn is call on client: the host's, or one of its replicas'
// (admin.Client.ForReplica).
func (h *AdminHost) CallOn(ctx context.Context, client *admin.Client, op string, req any, timeout time.Duration) ([]byte, error) {
	out, err := client.WithTimeout(timeout).Call(ctx, op, req)
	if err != nil {
		return nil, h.Explain(client, op, timeout, err)
	}
	return out, nil
}

// Explain turns the error of op, asked of client with timeout, into the
// CLI's: its message and exit status.
func (h *AdminHost) Explain(client *admin.Client, op string, timeout time.Duration, err error) error {
	var refused *admin.HostError
	switch {
	case errors.Is(err, admin.ErrNoExecutor) && client.Replica() != "":
		return cli.Exit(fmt.Sprintf("no answer from replica %s of host %q on %s: it announced itself, but may have stopped since",
			base.Shown(client.Replica()), client.ExecutorID(), redact.URL(h.Broker)), base.ExitNoExecutor)
	case errors.Is(err, admin.ErrNoExecutor):
		return cli.Exit(fmt.Sprintf("no answer from host %q on %s: is `cmdhost serve` running with --id %s there? (--executor, --broker)", client.ExecutorID(), redact.URL(h.Broker), client.ExecutorID()), base.ExitNoExecutor)
	case errors.Is(err, admin.ErrNoResponse):
		return TimedOut(err, rpc.Call{Topic: client.Topic(op), Timeout: timeout, Ack: true})
	case errors.As(err, &refused):
		return cli.Exit(refused, base.ExitFailed)
	case errors.As(err, new(*session.PublishRefusedError)):
		// The broker's ACL: this client may not use the admin ops.
		return cli.Exit(err, ExitRefused)
	}
	return err
}

// replicaSet is the replicas of a host's share group heard from, with
// when each last announced itself (admin.ReplicasTopic).
type replicaSet struct {
	mu        sync.Mutex
	seen      map[string]heard
	first     chan struct{} // closed at the first announcement: the subscription is live
	firstOnce sync.Once
}

// heard is when a replica last announced itself, and in which group.
type heard struct {
	at    time.Time
	share string
}

// maxReplicas bounds the replicas a --all view keeps: anyone on the
// broker may announce one, and each is asked at every refresh.
const maxReplicas = 64

// ListenReplicas receives the announcements of the host's replicas until
// ctx ends.
func (h *AdminHost) ListenReplicas(ctx context.Context) *replicaSet {
	set := &replicaSet{seen: map[string]heard{}, first: make(chan struct{})}
	go func() {
		_ = h.Client.Replicas(ctx, func(id admin.ReplicaID) {
			set.firstOnce.Do(func() { close(set.first) })
			set.mu.Lock()
			defer set.mu.Unlock()
			if _, known := set.seen[id.ClientID]; known || len(set.seen) < maxReplicas {
				set.seen[id.ClientID] = heard{at: time.Now(), share: id.Share}
			}
		})
	}()
	return set
}

// Live returns the replicas of share group share heard from in the last
// three announcement intervals before now (the others are forgotten),
// and also, those of also (the replica that answered the shared op),
// sorted.
func (r *replicaSet) Live(now time.Time, share string, also ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id, h := range r.seen {
		switch {
		case now.Sub(h.at) > 3*admin.AnnounceInterval:
			delete(r.seen, id)
		case h.share == share:
			out = append(out, id)
		}
	}
	for _, id := range also {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Replicas finds the replicas of the host: it asks the host's stats on
// the shared topic (a host that does not answer fails as the other ops
// do) and, when the host that answered is a replica of a share group,
// listens to the group's announcements for admin.DiscoveryWindow from
// the first one set heard (then its subscription is live, however long it
// took; at most timeout is spent waiting for that first one). A lone
// host is its one replica.
func (h *AdminHost) Replicas(ctx context.Context, set *replicaSet, timeout time.Duration) (admin.ReplicaID, []string, error) {
	st, err := h.Stats(ctx, timeout)
	if err != nil {
		return admin.ReplicaID{}, nil, err
	}
	if st.Share == "" {
		return st.ReplicaID, []string{st.ClientID}, nil
	}
	select {
	case <-ctx.Done():
		return st.ReplicaID, nil, ctx.Err()
	case <-set.first:
	case <-time.After(timeout):
	}
	select {
	case <-ctx.Done():
		return st.ReplicaID, nil, ctx.Err()
	case <-time.After(admin.DiscoveryWindow):
	}
	return st.ReplicaID, set.Live(time.Now(), st.Share, st.ClientID), nil
}

// ReplicaClient is the client that asks replica id on its own topics, or
// the host's when id is "" (a host from before replicas named themselves)
// or not a topic level (a lone host's client id may be any MQTT one: it
// serves no topics of its own then).
func (h *AdminHost) ReplicaClient(id string) (*admin.Client, error) {
	if id == "" || topic.CheckLevel(id) != nil {
		return h.Client, nil
	}
	return h.Client.ForReplica(id)
}

// HostLine names the host and the replica that answered, as plugin list
// shows them: "host H, replica R (share group G)"; a lone host whose
// client id is its executor id is only "host H".
func HostLine(executor string, id admin.ReplicaID) string {
	if r := ReplicaLine(executor, id); r != "" {
		return "host " + base.Shown(executor) + ", " + r
	}
	return "host " + base.Shown(executor)
}

// ReplicaLine is "replica R (share group G)", or "" for a lone host whose
// client id is its executor id (or a host from before replicas were
// named).
func ReplicaLine(executor string, id admin.ReplicaID) string {
	if id.ClientID == "" || id.Share == "" && id.ClientID == executor {
		return ""
	}
	s := "replica " + base.Shown(id.ClientID)
	if id.Share != "" {
		s += " (share group " + base.Shown(id.Share) + ")"
	}
	return s
}

// Units shows a count of fuel units shortly: 950, 12k, 3.4M, 7.1G.
func Units(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	case n < 10_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n < 1_000_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n < 10_000_000_000:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	}
	return fmt.Sprintf("%dG", n/1_000_000_000)
}
