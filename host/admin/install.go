package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/cmdhost/cmdhost/internal/session"
)

// chunkOverhead is what an install request carries besides its chunk:
// topic, correlation data, response topic, the protocol's and the
// install's user properties (the token's length is added). A chunk is the
// packet limit less this.
const chunkOverhead = 16 << 10

// maxSignature is the room kept for a signature in the last chunk.
const maxSignature = 4 << 10

// Install sends the module bin to the host as plugin name, with sig, its
// signature file's content (nil: none; cmdhost plugin sign), and returns
// the host's verdict once it has loaded or refused it: served (with its
// digest and commands), or refused with the host's reason (Served false:
// not an error), while the version serving before goes on. It needs the
// token.
//
// It asks the host's stats first: their limits (Stats.MaxModuleBytes,
// MaxRequestBytes) and which replica answers. The module goes in one
// request when it fits the smaller of the broker's Maximum Packet Size
// (from its CONNACK) and the host's, else in chunks of that size, each
// sent once the one before is answered. On a share group every chunk goes
// to the replica that answered the stats (ForReplica): a module installs
// on one replica; ask each (Replicas) to install on all.
func (c *Client) Install(ctx context.Context, name string, bin, sig []byte) (Verdict, error) {
	st, err := c.Stats(ctx)
	if err != nil {
		return Verdict{}, err
	}
	if st.MaxModuleBytes > 0 && len(bin) > st.MaxModuleBytes {
		return Verdict{}, fmt.Errorf("the module is %d bytes, more than host %s takes (%d: its serve --max-module-size)", len(bin), c.cfg.ExecutorID, st.MaxModuleBytes)
	}
	to := c
	if c.replica == "" && st.Share != "" {
		if to, err = c.ForReplica(st.ClientID); err != nil {
			return Verdict{}, err
		}
	}
	size, err := chunkSize(c.inv.PacketLimit(), st.MaxRequestBytes, len(c.cfg.Token))
	if err != nil {
		return Verdict{}, err
	}
	sum := sha256.Sum256(bin)
	digest := hex.EncodeToString(sum[:])
	for off := 0; ; {
		end := min(off+size, len(bin))
		md := map[string]string{InstallNameKey: name, InstallDigestKey: digest,
			InstallSizeKey: strconv.Itoa(len(bin)), InstallOffsetKey: strconv.Itoa(off)}
		if end == len(bin) && sig != nil {
			md[InstallSignatureKey] = strings.TrimSpace(string(sig))
		}
		out, err := to.call(ctx, OpInstall, bin[off:end], "application/wasm", md)
		if err != nil {
			return Verdict{}, err
		}
		if end == len(bin) {
			var v Verdict
			if err := json.Unmarshal(out, &v); err != nil {
				return Verdict{}, fmt.Errorf("the host's verdict on %s: %w", name, err)
			}
			return v, nil
		}
		var p InstallProgress
		if err := json.Unmarshal(out, &p); err != nil || p.Received != end {
			return Verdict{}, fmt.Errorf("installing %s: the host holds %d bytes after the chunk ending at %d (%v): not the install protocol's answer", name, p.Received, end, err)
		}
		off = end
	}
}

// InstallFrom has the host pull the module of ref, an OCI reference
// (oci://REGISTRY/REPO[:TAG|@sha256:…]), from the registry itself, with
// its own credentials (serve --registry-*), and install it as plugin
// name; the verdict is Install's. It needs the token.
func (c *Client) InstallFrom(ctx context.Context, name, ref string) (Verdict, error) {
	st, err := c.Stats(ctx)
	if err != nil {
		return Verdict{}, err
	}
	to := c
	if c.replica == "" && st.Share != "" {
		if to, err = c.ForReplica(st.ClientID); err != nil {
			return Verdict{}, err
		}
	}
	out, err := to.call(ctx, OpInstall, nil, "", map[string]string{InstallNameKey: name, InstallReferenceKey: ref})
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	if err := json.Unmarshal(out, &v); err != nil {
		return Verdict{}, fmt.Errorf("the host's verdict on %s: %w", name, err)
	}
	return v, nil
}

// chunkSize is the largest chunk of module an install request may carry
// under the broker's packet limit and the host's (0: not known, the
// session's default for the host, MQTT's for the broker), with a token of
// tokenLen bytes.
func chunkSize(broker, host, tokenLen int) (int, error) {
	if host <= 0 {
		host = session.DefaultMaxPacketSize
	}
	limit := host
	if broker > 0 {
		limit = min(limit, broker)
	}
	n := limit - chunkOverhead - tokenLen - maxSignature
	if n < chunkOverhead {
		return 0, fmt.Errorf("a packet limit of %d bytes (broker %d, host %d) leaves no room for an install's chunks: raise the broker's maximum packet size or the host's --max-request-bytes", limit, broker, host)
	}
	return n, nil
}
