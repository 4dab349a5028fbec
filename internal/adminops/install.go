package adminops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/events"
	"github.com/cmdhost/cmdhost/internal/session"
	"github.com/cmdhost/cmdhost/internal/signing"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

// The install op takes a module in chunks (admin.InstallNameKey and the
// other user properties say where each goes) and, once it holds the
// whole module and its digest matches, has the plugins manager install
// it (plugins.Manager.Install) and answers with the verdict.

// Bounds of the uploads in progress: anyone with the token may start
// one, and each holds up to --max-module-size in memory until it ends.
const (
	// maxUploads is how many modules may be arriving at once; a chunk
	// that would start one more is refused (503) unless an idle one can
	// be dropped.
	maxUploads = 2
	// uploadIdle is how long an upload waits for its next chunk before a
	// new upload may take its place.
	uploadIdle = time.Minute
)

// uploads are the modules whose chunks are arriving, by plugin name. Its
// methods are called by the install op's handlers, several at once (the
// op's concurrency): mu guards the map and each upload.
type uploads struct {
	mu     sync.Mutex
	byName map[string]*upload
}

// upload is one module arriving.
type upload struct {
	digest string
	size   int
	buf    []byte
	last   time.Time // when its last chunk arrived
}

// chunk is what one install request carries.
type chunk struct {
	name, digest string
	size, offset int
	data         []byte
}

// add takes c in at now: the whole module when c completes it (the upload
// is then forgotten), nil while more is to come, or a response that
// refuses c.
func (u *uploads) add(c chunk, now time.Time) (whole []byte, received int, refusal *abi.Response) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byName == nil {
		u.byName = map[string]*upload{}
	}
	for name, idle := range u.byName { // an abandoned upload holds no memory past uploadIdle
		if now.Sub(idle.last) >= uploadIdle {
			delete(u.byName, name)
		}
	}
	up := u.byName[c.name]
	if c.offset == 0 {
		if up == nil && len(u.byName) >= maxUploads { // none idle: those were dropped above
			return nil, 0, &abi.Response{Status: abi.StatusServiceUnavailable,
				Message: fmt.Sprintf("the host is receiving %d modules already: try again once one is installed", maxUploads)}
		}
		// The buffer grows with what arrives, not with what the first
		// chunk announces: a chunk of one byte may announce the limit.
		up = &upload{digest: c.digest, size: c.size, last: now}
		u.byName[c.name] = up
	}
	switch {
	case up == nil || up.digest != c.digest || up.size != c.size:
		return nil, 0, bad(fmt.Sprintf("no upload of module %.16s… in progress for plugin %s (another may have replaced it, or it waited over %v): send it again from offset 0", c.digest, c.name, uploadIdle))
	case c.offset != len(up.buf):
		return nil, 0, bad(fmt.Sprintf("chunk at offset %d, but the host holds %d bytes of the module: send it again from offset 0", c.offset, len(up.buf)))
	case len(up.buf)+len(c.data) > up.size:
		delete(u.byName, c.name)
		return nil, 0, bad(fmt.Sprintf("chunks of more than the %d bytes announced (%s)", up.size, admin.InstallSizeKey))
	}
	up.buf = append(up.buf, c.data...)
	up.last = now
	if len(up.buf) < up.size {
		return nil, len(up.buf), nil
	}
	delete(u.byName, c.name)
	return up.buf, len(up.buf), nil
}

func bad(msg string) *abi.Response { return &abi.Response{Status: abi.StatusBadRequest, Message: msg} }

// readChunk reads the chunk r carries, checked against the host's module
// size limit max.
func readChunk(r *abi.Request, max int) (chunk, *abi.Response) {
	md := r.Metadata
	c := chunk{name: md[admin.InstallNameKey], digest: md[admin.InstallDigestKey], data: r.Payload}
	if err := plugins.CheckName(c.name); err != nil {
		return c, bad(admin.InstallNameKey + ": " + err.Error())
	}
	if b, err := hex.DecodeString(c.digest); err != nil || len(b) != sha256.Size || hex.EncodeToString(b) != c.digest {
		return c, bad(admin.InstallDigestKey + " must be the module's sha256 in lower-case hex")
	}
	var err error
	if c.size, err = strconv.Atoi(md[admin.InstallSizeKey]); err != nil || c.size <= 0 {
		return c, bad(admin.InstallSizeKey + " must be the module's size in bytes")
	}
	if c.size > max {
		return c, bad(fmt.Sprintf("the module is %d bytes, more than this host's limit of %d: raise it (serve --max-module-size) or make the module smaller", c.size, max))
	}
	if c.offset, err = strconv.Atoi(md[admin.InstallOffsetKey]); err != nil || c.offset < 0 || c.offset+len(c.data) > c.size {
		return c, bad(admin.InstallOffsetKey + " must be the chunk's offset in the module, the chunk within its size")
	}
	if len(md[admin.InstallSignatureKey]) > signing.MaxSignatureFile {
		return c, bad(admin.InstallSignatureKey + " is larger than a signature file")
	}
	return c, nil
}

// installOp is the install op's handler (its token is checked before).
func (a *Ops) installOp(ctx context.Context, r *abi.Request) (*abi.Response, error) {
	if ref, ok := r.Metadata[admin.InstallReferenceKey]; ok {
		return a.installFrom(ctx, r, ref)
	}
	c, refusal := readChunk(r, a.maxModule())
	if refusal != nil {
		return refusal, nil
	}
	whole, received, refusal := a.uploads.add(c, a.clk.Now())
	switch {
	case refusal != nil:
		return refusal, nil
	case whole == nil:
		return jsonReply(admin.InstallProgress{Received: received})
	}
	if sum := sha256.Sum256(whole); hex.EncodeToString(sum[:]) != c.digest {
		return bad(fmt.Sprintf("the module received has digest %x, not the %s announced: send it again", sum, c.digest)), nil
	}
	var sig []byte
	if s, ok := r.Metadata[admin.InstallSignatureKey]; ok {
		sig = []byte(s + "\n")
	}
	in, err := a.cfg.Manager.Install(ctx, c.name, whole, sig)
	return a.verdict(ctx, r, admin.OpInstall, c.name, c.digest, in, err)
}

// installFrom pulls the module of ref with Config.Pull and installs it.
func (a *Ops) installFrom(ctx context.Context, r *abi.Request, ref string) (*abi.Response, error) {
	name := r.Metadata[admin.InstallNameKey]
	if err := plugins.CheckName(name); err != nil {
		return bad(admin.InstallNameKey + ": " + err.Error()), nil
	}
	if a.cfg.Pull == nil {
		return bad("this host does not pull from registries: send the module (cmdhost plugin install without --host-pulls)"), nil
	}
	if len(ref) > 1024 || len(r.Payload) > 0 {
		return bad(admin.InstallReferenceKey + " is an OCI reference of at most 1024 bytes, and the request has no payload"), nil
	}
	bin, sig, err := a.cfg.Pull(ctx, ref, a.maxModule())
	if err != nil {
		reason := a.relativeText(fmt.Sprintf("pulling %s: %v", session.CleanText(ref, 256), err))
		a.audit(r, admin.OpInstall, name, "", events.VerdictRefused, reason)
		return jsonReply(admin.Verdict{ReplicaID: a.Replica(), Name: name, Reason: reason})
	}
	sum := sha256.Sum256(bin)
	in, err := a.cfg.Manager.Install(ctx, name, bin, sig)
	return a.verdict(ctx, r, admin.OpInstall, name, hex.EncodeToString(sum[:]), in, err)
}

// rollbackOp is the rollback op's handler (its token is checked before).
func (a *Ops) rollbackOp(ctx context.Context, r *abi.Request, req admin.Request) (*abi.Response, error) {
	if err := plugins.CheckName(req.Name); err != nil {
		return bad(`name the plugin: {"name":"echo"}: ` + err.Error()), nil
	}
	rollback := a.cfg.Manager.Rollback
	if req.Reject {
		rollback = a.cfg.Manager.Reject
	}
	in, err := rollback(ctx, req.Name)
	return a.verdict(ctx, r, admin.OpRollback, req.Name, in.Digest, in, err)
}

// verdict answers an install or a rollback of plugin name with the
// module digest: served, refused (the host's reason; the version serving
// goes on), or an error (the host stops, a failure) – and audits it.
func (a *Ops) verdict(ctx context.Context, r *abi.Request, op, name, digest string, in plugins.Installed, err error) (*abi.Response, error) {
	var refused *plugins.RefusedError
	switch {
	case errors.As(err, &refused):
		a.audit(r, op, name, refused.Digest, events.VerdictRefused, a.relativeText(err.Error()))
		return jsonReply(admin.Verdict{ReplicaID: a.Replica(), Name: name, Digest: refused.Digest, Reason: a.relativeText(err.Error())})
	case err != nil && (ctx.Err() != nil || errors.Is(err, plugins.ErrClosed)):
		return nil, err
	case err != nil:
		a.audit(r, op, name, digest, events.VerdictRefused, a.relativeText(err.Error()))
		return &abi.Response{Status: abi.StatusBadRequest, Message: a.relativeText(err.Error()), PropName: "name", PropValue: name}, nil
	}
	a.audit(r, op, name, in.Digest, events.VerdictDone, "")
	return jsonReply(admin.Verdict{ReplicaID: a.Replica(), Name: name, Digest: in.Digest, Served: true,
		Commands: in.Commands, Previous: in.Previous})
}

// audit reports an op that changes a plugin, done or refused, as an
// event (the log, and the events topic with serve --events): which op,
// plugin and digest, who asked (the client id the request claims, cut to
// 128 bytes), the verdict and the reason of a refusal.
func (a *Ops) audit(r *abi.Request, op, plugin, digest, verdict, reason string) {
	a.events.Emit(events.Finish(events.Event{Kind: events.KindAdmin, Op: op, Type: op, Plugin: plugin, Digest: digest,
		Invoker: session.CleanText(r.InvokerID, 128), User: session.CleanText(r.Caller.User, 128),
		ClientID: session.CleanText(r.Caller.ClientID, 128), Verdict: verdict, Reason: reason, Time: a.clk.Now()}))
}

func jsonReply(v any) (*abi.Response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &abi.Response{Payload: b, ContentType: "application/json", Format: abi.FormatUTF8}, nil
}

// maxModule is the largest module an install may send: the manager's
// limit (serve --max-module-size).
func (a *Ops) maxModule() int {
	if a.cfg.MaxModuleBytes > 0 {
		return a.cfg.MaxModuleBytes
	}
	return wasm.DefaultMaxModuleBytes
}
