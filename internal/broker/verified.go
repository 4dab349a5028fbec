package broker

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"sync"
	"time"
)

// A user who logged in a moment ago and logs in again (a client that
// reconnects, a CLI run after another) has its password checked once:
// verifiedLogins remembers the user names and passwords that passed,
// so that the next login with them costs an HMAC, not a bcrypt check,
// and waits for no other's (logins.go).
//
//   - An entry is the HMAC-SHA256, under a key drawn at random when the
//     broker starts, of the user name and the password: the passwords are
//     not kept, and the entries mean nothing outside this process.
//   - It holds for the version of the users file it was checked against
//     (passwd.File.Version): any change of the file (a password changed,
//     a user removed) forgets every entry.
//   - It holds for verifiedTTL after the check, and at most
//     Config.MaxClients entries are kept (one per user and password in
//     use), the one checked longest ago dropped beyond them.
//   - Only a login that passed is entered: a wrong password costs its
//     check as before, and finding an entry tells a client nothing it
//     does not learn from the check.
//
// What it costs: someone who can read the broker's memory learns the key
// and the entries, against which guessing a password costs an HMAC, where
// the users file's hashes cost a bcrypt check per guess. That is why
// entries last an hour, not longer.

// verifiedTTL is how long a password that passed is taken without a
// check.
const verifiedTTL = time.Hour

// verifiedLogins is the cache of the logins that passed. Safe for
// concurrent use.
type verifiedLogins struct {
	key [32]byte
	max int

	mu      sync.Mutex
	entries map[[sha256.Size]byte]verifiedEntry
}

// verifiedEntry is a login that passed against version of the users file,
// good until until.
type verifiedEntry struct {
	version uint64
	until   time.Time
}

func newVerifiedLogins(max int) *verifiedLogins {
	v := &verifiedLogins{max: max, entries: map[[sha256.Size]byte]verifiedEntry{}}
	_, _ = rand.Read(v.key[:]) // never fails (crypto/rand panics rather)
	return v
}

// sum is the entry's key for user and password: a user name holds no
// colon (passwd.CheckName), so no two pairs share the text hashed.
func (v *verifiedLogins) sum(user, password string) [sha256.Size]byte {
	m := hmac.New(sha256.New, v.key[:])
	m.Write([]byte(user))
	m.Write([]byte{':'})
	m.Write([]byte(password))
	var s [sha256.Size]byte
	m.Sum(s[:0])
	return s
}

// has reports whether user and password passed against version within
// verifiedTTL of now.
func (v *verifiedLogins) has(user, password string, version uint64, now time.Time) bool {
	s := v.sum(user, password)
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.entries[s]
	return ok && e.version == version && now.Before(e.until)
}

// add enters user and password, which passed against version at now.
func (v *verifiedLogins) add(user, password string, version uint64, now time.Time) {
	s := v.sum(user, password)
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.entries[s]; !ok && len(v.entries) >= v.max {
		v.makeRoom(version, now)
	}
	v.entries[s] = verifiedEntry{version: version, until: now.Add(verifiedTTL)}
}

// makeRoom drops the entries that no longer hold, and if none, the one
// checked longest ago. A pass over the entries, under v.mu: it takes as
// many logins that passed, each with another user's password, as there
// are entries to come here again.
func (v *verifiedLogins) makeRoom(version uint64, now time.Time) {
	var oldest [sha256.Size]byte
	var oldestUntil time.Time
	dropped := false
	for s, e := range v.entries {
		switch {
		case e.version != version || !now.Before(e.until):
			delete(v.entries, s)
			dropped = true
		case oldestUntil.IsZero() || e.until.Before(oldestUntil):
			oldest, oldestUntil = s, e.until
		}
	}
	if !dropped {
		delete(v.entries, oldest)
	}
}
