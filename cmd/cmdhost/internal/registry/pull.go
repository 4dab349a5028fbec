package registry

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/internal/oci"
)

// Pull fetches the module of the oci:// reference ref with the registry
// flags of c, at most maxSentModule bytes.
func Pull(c *cli.Context, ref string) (oci.Pulled, error) {
	cfg, err := RegistryConfig(c)
	if err != nil {
		return oci.Pulled{}, err
	}
	cfg.MaxBytes = MaxSentModule
	pulled, err := oci.Pull(c.Context, ref, cfg)
	if err != nil {
		return oci.Pulled{}, cli.Exit(err, base.ExitFailed)
	}
	return pulled, nil
}

// MaxSentModule bounds the module file install reads to send: a host
// takes at most its --max-module-size, which it says in its stats.
const MaxSentModule = 256 << 20

// RepositoryName is the last path element of an OCI reference's
// repository: oci://r:5000/plugins/greet:1.0 → greet.
func RepositoryName(ref string) string {
	ref = strings.TrimPrefix(ref, oci.Scheme)
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if i := strings.Index(last, ":"); i >= 0 {
		last = last[:i]
	}
	return last
}
