package adminops

import (
	"strconv"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/session"
)

// byIdentity reports whether r's verified caller may use op without the
// token (Config.Admin); each op so allowed is logged with who, an install
// once, at its first chunk (offset 0), not at each of its chunks.
func (a *Ops) byIdentity(op string, r *abi.Request) bool {
	if a.cfg.Admin == nil || r.Caller.User == "" || !a.cfg.Admin(r.Caller) {
		return false
	}
	if off, chunked := r.Metadata[admin.InstallOffsetKey]; op != admin.OpInstall || !chunked || firstChunk(off) {
		a.log.Info("admin op allowed by identity", "op", op, "user", session.CleanText(r.Caller.User, 128),
			"client_id", session.CleanText(r.Caller.ClientID, 128))
	}
	return true
}

// firstChunk says whether an install chunk's offset is 0, read as
// readChunk reads it ("00" and "+0" too).
func firstChunk(offset string) bool {
	n, err := strconv.Atoi(offset)
	return err == nil && n == 0
}
