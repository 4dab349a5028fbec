package hostconn

// The secrets of serve: the shared store's URL, TLS and password, and the
// admin token. A secret is given as a file (re-read at each use) or an
// environment variable, never as a flag's value alone, which anyone who
// can list processes reads; --admin-token stays for compatibility, with a
// warning.

// The environment variables that carry a secret's value.
const (
	EnvStorePassword = "CMDHOST_STORE_PASSWORD"
	EnvAdminToken    = "CMDHOST_ADMIN_TOKEN"
)
