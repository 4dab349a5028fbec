//! The durable state store (ABI section 17): keys and values kept by the
//! host, seen by every replica. A handler's writes are staged: it reads
//! them back at once, and everyone else sees them when its reply is
//! recorded, all of them or none (a call that fails, times out or is
//! cancelled writes nothing, and a request delivered twice writes once).

use std::time::Duration;

use crate::envelope::{ceil_millis, records};
use crate::host;

/// ABI results the state functions answer.
const NOT_FOUND: i32 = -1;
const TOO_LARGE: i32 = -2;
const LIMIT: i32 = -3;
const NOT_INTEGER: i32 = -5;
const INVALID: i32 = -7;
const TOO_SMALL: i32 = -8;
const DENIED: i32 = -9;
const CONFLICT: i32 = -10;
const UNAVAILABLE: i32 = -11;

/// An error of the state store: a typed result, never a trap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateError {
    /// No such key (or it expired).
    NotFound,
    /// A condition failed: the key exists, or its version is not the one
    /// named.
    Conflict,
    /// The namespace is full (its operator file's "state" limits).
    Quota,
    /// A key, a value or the call's writes are over their bound.
    TooLarge,
    /// The operator file does not grant this namespace (or grants it
    /// read-only).
    Denied,
    /// The store cannot be read or written now; nothing was staged.
    Unavailable,
    /// The value is not a decimal integer (or the sum overflows).
    NotInteger,
    /// An invalid namespace name, an empty key or a bad option.
    Invalid,
    /// Any other result (outside a handler's call, say).
    Other(i32),
}

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            StateError::NotFound => write!(f, "state: no such key"),
            StateError::Conflict => write!(f, "state: condition failed (the key exists, or its version changed)"),
            StateError::Quota => write!(f, "state: the namespace is full (its operator file's \"state\" limits)"),
            StateError::TooLarge => write!(f, "state: a key, value or the call's writes are over their bound"),
            StateError::Denied => write!(f, "state: the operator file does not grant this namespace (or grants it read-only)"),
            StateError::Unavailable => write!(f, "state: the store is unavailable; nothing was written"),
            StateError::NotInteger => write!(f, "state: the value is not a decimal integer (or the sum overflows)"),
            StateError::Invalid => write!(f, "state: invalid namespace name, empty key or bad option"),
            StateError::Other(r) => write!(f, "state: host call failed with result {}", r),
        }
    }
}

impl std::error::Error for StateError {}

fn check(r: i32) -> Result<i32, StateError> {
    match r {
        r if r >= 0 => Ok(r),
        NOT_FOUND => Err(StateError::NotFound),
        CONFLICT => Err(StateError::Conflict),
        LIMIT => Err(StateError::Quota),
        TOO_LARGE => Err(StateError::TooLarge),
        DENIED => Err(StateError::Denied),
        UNAVAILABLE => Err(StateError::Unavailable),
        NOT_INTEGER => Err(StateError::NotInteger),
        INVALID => Err(StateError::Invalid),
        r => Err(StateError::Other(r)),
    }
}

/// A namespace of the state store: the plugin's own ([`state`]) or a
/// shared one the operator granted ([`shared_state`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateSpace {
    ns: String,
}

/// The plugin's own namespace.
pub fn state() -> StateSpace {
    StateSpace { ns: String::new() }
}

/// The shared namespace name; the operator file must grant it
/// (`"state": {"shared": {"NAME": "read"}}` or `"read-write"`).
pub fn shared_state(name: &str) -> StateSpace {
    StateSpace { ns: name.into() }
}

/// The conditions and expiry of a [`StateSpace::set_with`]; the default
/// sets unconditionally, never to expire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetOptions {
    ttl: Option<Duration>,
    if_version: u64,
    if_absent: bool,
}

impl SetOptions {
    pub fn new() -> SetOptions {
        SetOptions::default()
    }
    /// The key expires d after the call's reply is recorded.
    pub fn ttl(mut self, d: Duration) -> SetOptions {
        self.ttl = Some(d);
        self
    }
    /// Only if the key does not exist ([`StateError::Conflict`] otherwise).
    pub fn if_absent(mut self) -> SetOptions {
        self.if_absent = true;
        self
    }
    /// Only if the key's version is still v ([`StateError::Conflict`]
    /// otherwise): compare-and-set.
    pub fn if_version(mut self, v: u64) -> SetOptions {
        self.if_version = v;
        self
    }
}

/// A page of [`StateSpace::list`]: keys in byte order; when `more`, list
/// again after the last one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListPage {
    pub keys: Vec<Vec<u8>>,
    pub more: bool,
}

impl StateSpace {
    /// The key's value and version. A key this call wrote has version 0
    /// until the call's reply is recorded.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<(Vec<u8>, u64), StateError> {
        let mut buf = vec![0u8; 256];
        for _ in 0..4 {
            let mut version = 0;
            let n = check(host::state_get(self.ns.as_bytes(), key.as_ref(), &mut buf, &mut version))? as usize;
            if n <= buf.len() {
                buf.truncate(n);
                return Ok((buf, version));
            }
            buf = vec![0u8; n];
        }
        Err(StateError::Unavailable) // the value kept changing size while being read
    }

    /// Stages key = value.
    pub fn set(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<(), StateError> {
        self.set_with(key, value, SetOptions::default())
    }

    /// Stages key = value, on conditions or with an expiry.
    pub fn set_with(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, opts: SetOptions) -> Result<(), StateError> {
        let ttl_ms = opts.ttl.map_or(0, ceil_millis); // 0 is never
        let flags = if opts.if_absent { 1 } else { 0 };
        check(host::state_set(self.ns.as_bytes(), key.as_ref(), value.as_ref(), ttl_ms, opts.if_version, flags)).map(|_| ())
    }

    /// Stages the key's removal; whether it exists.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<bool, StateError> {
        self.delete_if_version(key, 0)
    }

    /// Stages the key's removal only if its version is still v (0: any
    /// version); whether it exists.
    pub fn delete_if_version(&self, key: impl AsRef<[u8]>, v: u64) -> Result<bool, StateError> {
        check(host::state_delete(self.ns.as_bytes(), key.as_ref(), v)).map(|r| r == 1)
    }

    /// Adds delta to the key read as a decimal integer (absent reads 0)
    /// and returns the sum. Two calls adding to one key at once cannot
    /// both commit: the later one runs again.
    pub fn add(&self, key: impl AsRef<[u8]>, delta: i64) -> Result<i64, StateError> {
        let (n, r) = host::state_add(self.ns.as_bytes(), key.as_ref(), delta);
        check(r).map(|_| n)
    }

    /// The keys that start with prefix and sort after `after` (empty: from
    /// the first), in byte order, a page at a time.
    pub fn list(&self, prefix: impl AsRef<[u8]>, after: impl AsRef<[u8]>) -> Result<ListPage, StateError> {
        let (prefix, after) = (prefix.as_ref(), after.as_ref());
        let mut buf = vec![0u8; 16 << 10];
        let mut r = host::state_list(self.ns.as_bytes(), prefix, after, &mut buf);
        if r == TOO_SMALL {
            buf = vec![0u8; 1 << 20];
            r = host::state_list(self.ns.as_bytes(), prefix, after, &mut buf);
        }
        let n = check(r)? as usize;
        decode_page(&buf[..n.min(buf.len())])
    }
}

/// Reads a state_list page: key records (tag 1) and more (tag 2).
fn decode_page(b: &[u8]) -> Result<ListPage, StateError> {
    let mut page = ListPage::default();
    for (tag, v) in records(b).map_err(|_| StateError::Other(INVALID))? {
        match tag {
            1 => page.keys.push(v.to_vec()),
            2 => page.more = v == [1],
            _ => {}
        }
    }
    Ok(page)
}

/// Empties the state store's stand-in, which the SDK uses off wasm (in
/// native tests): in memory, one per thread, every write visible at once.
#[cfg(not(target_arch = "wasm32"))]
pub fn reset_test_state() {
    host::standin::reset()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(k: &[u8]) -> String {
        String::from_utf8_lossy(k).into_owned()
    }

    /// The stand-in keeps the host's rules, so that a handler's own tests
    /// see what the host would do.
    #[test]
    fn stand_in() {
        reset_test_state();
        let s = state();
        assert_eq!(s.get("k"), Err(StateError::NotFound));
        assert_eq!(s.set_with("k", "v", SetOptions::new().if_absent()), Ok(()));
        assert_eq!(s.set_with("k", "w", SetOptions::new().if_absent()), Err(StateError::Conflict));
        let (v, version) = s.get("k").expect("k");
        assert_eq!((v.as_slice(), version > 0), (&b"v"[..], true));
        assert_eq!(s.set_with("k", "w", SetOptions::new().if_version(version + 1)), Err(StateError::Conflict));
        assert_eq!(s.set_with("k", "w", SetOptions::new().if_version(version).ttl(Duration::from_secs(1))), Ok(()));
        assert_eq!(s.add("n", 41), Ok(41));
        assert_eq!(s.add("n", 1), Ok(42));
        assert_eq!(s.add("k", 1), Err(StateError::NotInteger));
        assert_eq!(s.add("n", i64::MAX), Err(StateError::NotInteger));
        assert_eq!(shared_state("other").get("k"), Err(StateError::NotFound), "namespaces are apart");
        assert_eq!(s.set("", "v"), Err(StateError::Invalid));
        let big = vec![b'x'; 1000];
        s.set("big", &big).expect("big");
        assert_eq!(s.get("big").expect("big").0, big, "a value over the first buffer");

        for i in 0..300 {
            s.set(format!("p/{:03}", i), "").expect("p");
        }
        let (mut all, mut after, mut pages) = (Vec::new(), Vec::new(), 0);
        loop {
            let page = s.list("p/", &after).expect("list");
            pages += 1;
            all.extend(page.keys.iter().map(|k| text(k)));
            if !page.more {
                break;
            }
            after = page.keys.last().expect("a key").clone();
        }
        assert_eq!((pages, all.len()), (2, 300));
        assert_eq!((all[0].as_str(), all[299].as_str()), ("p/000", "p/299"));
        assert_eq!(s.list("none/", ""), Ok(ListPage::default()));

        assert_eq!(s.delete("k"), Ok(true));
        assert_eq!(s.delete("k"), Ok(false));
        let (_, v) = s.get("n").expect("n");
        assert_eq!(s.delete_if_version("n", v + 1), Err(StateError::Conflict));
        assert_eq!(s.delete_if_version("n", v), Ok(true));
    }

    #[test]
    fn page_cut_short() {
        for page in [&[1u8, 5, 0, 0, 0, b'a'][..], &[1, 0, 0]] {
            assert!(decode_page(page).is_err(), "page {:?} decoded", page);
        }
    }
}
