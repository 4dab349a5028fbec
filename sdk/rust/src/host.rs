//! The host's imports (module `cmdhost`, ABI section 5), and stand-ins off
//! wasm so that handlers build and run in native unit tests.

#[cfg(target_arch = "wasm32")]
mod imports {
    #[link(wasm_import_module = "cmdhost")]
    extern "C" {
        pub fn describe(ptr: *const u8, len: i32) -> i32;
        pub fn request_len() -> i32;
        pub fn request_read(ptr: *mut u8, cap: i32) -> i32;
        pub fn response_write(ptr: *const u8, len: i32) -> i32;
        pub fn log(level: i32, ptr: *const u8, len: i32);
        pub fn config_get(kptr: *const u8, klen: i32, buf: *mut u8, cap: i32) -> i32;
        pub fn var_get(kptr: *const u8, klen: i32, buf: *mut u8, cap: i32) -> i32;
        pub fn var_set(kptr: *const u8, klen: i32, vptr: *const u8, vlen: i32) -> i32;
        pub fn var_add(kptr: *const u8, klen: i32, delta: i64, out: *mut u8) -> i32;
        pub fn invoke(ptr: *const u8, len: i32) -> i32;
        pub fn invoke_result_read(ptr: *mut u8, cap: i32) -> i32;
        pub fn state_get(ns: *const u8, nsn: i32, k: *const u8, kn: i32, buf: *mut u8, cap: i32, version: *mut u8) -> i32;
        pub fn state_set(ns: *const u8, nsn: i32, k: *const u8, kn: i32, v: *const u8, vn: i32, ttl_ms: i64, if_version: i64, flags: i32) -> i32;
        pub fn state_delete(ns: *const u8, nsn: i32, k: *const u8, kn: i32, if_version: i64) -> i32;
        pub fn state_add(ns: *const u8, nsn: i32, k: *const u8, kn: i32, delta: i64, out: *mut u8) -> i32;
        pub fn state_list(ns: *const u8, nsn: i32, p: *const u8, pn: i32, a: *const u8, an: i32, buf: *mut u8, cap: i32) -> i32;
        pub fn publish(ptr: *const u8, len: i32) -> i32;
        pub fn http_request(ptr: *const u8, len: i32) -> i32;
        pub fn http_result_read(ptr: *mut u8, cap: i32) -> i32;
    }
}

/// ResultNotFound.
const NOT_FOUND: i32 = -1;

#[cfg(target_arch = "wasm32")]
pub(crate) fn describe(b: &[u8]) -> i32 {
    unsafe { imports::describe(b.as_ptr(), b.len() as i32) }
}

/// The current call's encoded Request.
#[cfg(target_arch = "wasm32")]
pub(crate) fn request() -> Option<Vec<u8>> {
    let n = unsafe { imports::request_len() };
    if n < 0 {
        return None;
    }
    let mut buf = vec![0u8; n as usize];
    if unsafe { imports::request_read(buf.as_mut_ptr(), n) } != n {
        return None;
    }
    Some(buf)
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn response_write(b: &[u8]) -> i32 {
    unsafe { imports::response_write(b.as_ptr(), b.len() as i32) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn log(level: i32, msg: &[u8]) {
    unsafe { imports::log(level, msg.as_ptr(), msg.len() as i32) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn config_get(key: &[u8], buf: &mut [u8]) -> i32 {
    unsafe { imports::config_get(key.as_ptr(), key.len() as i32, buf.as_mut_ptr(), buf.len() as i32) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn var_get(key: &[u8], buf: &mut [u8]) -> i32 {
    unsafe { imports::var_get(key.as_ptr(), key.len() as i32, buf.as_mut_ptr(), buf.len() as i32) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn var_set(key: &[u8], value: &[u8]) -> i32 {
    unsafe { imports::var_set(key.as_ptr(), key.len() as i32, value.as_ptr(), value.len() as i32) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn var_add(key: &[u8], delta: i64) -> (i64, i32) {
    let mut out = [0u8; 8];
    let r = unsafe { imports::var_add(key.as_ptr(), key.len() as i32, delta, out.as_mut_ptr()) };
    (i64::from_le_bytes(out), r)
}

/// Runs an encoded Invocation and returns the encoded InvocationResult.
#[cfg(target_arch = "wasm32")]
pub(crate) fn invoke(inv: &[u8]) -> Result<Vec<u8>, i32> {
    read_result(unsafe { imports::invoke(inv.as_ptr(), inv.len() as i32) }, imports::invoke_result_read)
}

/// Reads the result of n bytes a host call left (invoke, http_request)
/// with read; Err(n) when the call failed with the result n.
#[cfg(target_arch = "wasm32")]
fn read_result(n: i32, read: unsafe extern "C" fn(*mut u8, i32) -> i32) -> Result<Vec<u8>, i32> {
    if n < 0 {
        return Err(n);
    }
    let mut buf = vec![0u8; n as usize];
    let got = unsafe { read(buf.as_mut_ptr(), n) };
    if got != n {
        return Err(got.min(-1));
    }
    Ok(buf)
}

/// The state store (ABI section 17): ns is empty for the plugin's own
/// namespace.
#[cfg(target_arch = "wasm32")]
pub(crate) fn state_get(ns: &[u8], key: &[u8], buf: &mut [u8], version: &mut u64) -> i32 {
    let mut v = [0u8; 8];
    let r = unsafe { imports::state_get(ns.as_ptr(), ns.len() as i32, key.as_ptr(), key.len() as i32, buf.as_mut_ptr(), buf.len() as i32, v.as_mut_ptr()) };
    *version = u64::from_le_bytes(v);
    r
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn state_set(ns: &[u8], key: &[u8], value: &[u8], ttl_ms: i64, if_version: u64, flags: i32) -> i32 {
    unsafe { imports::state_set(ns.as_ptr(), ns.len() as i32, key.as_ptr(), key.len() as i32, value.as_ptr(), value.len() as i32, ttl_ms, if_version as i64, flags) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn state_delete(ns: &[u8], key: &[u8], if_version: u64) -> i32 {
    unsafe { imports::state_delete(ns.as_ptr(), ns.len() as i32, key.as_ptr(), key.len() as i32, if_version as i64) }
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn state_add(ns: &[u8], key: &[u8], delta: i64) -> (i64, i32) {
    let mut out = [0u8; 8];
    let r = unsafe { imports::state_add(ns.as_ptr(), ns.len() as i32, key.as_ptr(), key.len() as i32, delta, out.as_mut_ptr()) };
    (i64::from_le_bytes(out), r)
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn state_list(ns: &[u8], prefix: &[u8], after: &[u8], buf: &mut [u8]) -> i32 {
    unsafe { imports::state_list(ns.as_ptr(), ns.len() as i32, prefix.as_ptr(), prefix.len() as i32, after.as_ptr(), after.len() as i32, buf.as_mut_ptr(), buf.len() as i32) }
}

/// Hands an encoded Message to the host (ABI section 18).
#[cfg(target_arch = "wasm32")]
pub(crate) fn publish(msg: &[u8]) -> i32 {
    unsafe { imports::publish(msg.as_ptr(), msg.len() as i32) }
}

/// Sends an encoded HTTPRequest and returns the encoded HTTPResult (ABI
/// section 19).
#[cfg(target_arch = "wasm32")]
pub(crate) fn http(req: &[u8]) -> Result<Vec<u8>, i32> {
    read_result(unsafe { imports::http_request(req.as_ptr(), req.len() as i32) }, imports::http_result_read)
}

// Off wasm: nothing is there. A handler's native unit test sees no config,
// no variables and no nested calls, and its log goes to stderr; the state
// store and publishing are stand-ins in memory (standin, below), and HTTP
// is answered by the test's function (http::standin).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn describe(_: &[u8]) -> i32 {
    -6
}
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn request() -> Option<Vec<u8>> {
    None
}
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn response_write(_: &[u8]) -> i32 {
    -6
}
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn log(level: i32, msg: &[u8]) {
    eprintln!("cmdhost log {}: {}", level, String::from_utf8_lossy(msg));
}
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn config_get(_: &[u8], _: &mut [u8]) -> i32 {
    NOT_FOUND
}
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn var_get(_: &[u8], _: &mut [u8]) -> i32 {
    NOT_FOUND
}
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn var_set(_: &[u8], _: &[u8]) -> i32 {
    -6
}
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn var_add(_: &[u8], _: i64) -> (i64, i32) {
    (0, -6)
}
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn invoke(_: &[u8]) -> Result<Vec<u8>, i32> {
    Err(-6)
}
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use crate::http::standin::http;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use standin::{publish, state_add, state_delete, state_get, state_list, state_set};

/// The stand-ins off wasm, for handlers' native tests. The state store: in
/// memory, one store per thread (so tests running at once stay apart),
/// every write visible at once (there is no call to commit with),
/// conditions checked as the host checks them, expiry and bounds ignored.
/// Publishing: each thread's messages kept in order, checked as any host
/// checks them, grants and bounds ignored.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod standin {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    type Space = BTreeMap<Vec<u8>, (Vec<u8>, u64)>;

    thread_local! {
        static STORE: RefCell<(BTreeMap<Vec<u8>, Space>, u64)> = RefCell::new((BTreeMap::new(), 0));
        static PUBLISHED: RefCell<Vec<crate::Message>> = RefCell::new(Vec::new());
    }

    /// Keeps the message (in this thread) unless the host would refuse it
    /// whatever its grants (ResultInvalid).
    pub(crate) fn publish(msg: &[u8]) -> i32 {
        match crate::publish::decode_message(msg) {
            Some(m) => PUBLISHED.with(|p| p.borrow_mut().push(m)),
            None => return -7,
        }
        0
    }

    pub(crate) fn take_published() -> Vec<crate::Message> {
        PUBLISHED.with(|p| std::mem::take(&mut *p.borrow_mut()))
    }

    pub(crate) fn reset() {
        STORE.with(|s| *s.borrow_mut() = (BTreeMap::new(), 0));
    }

    /// Runs f on the namespace's keys and a fresh version, unless the key
    /// is empty (ResultInvalid).
    fn with(ns: &[u8], key: &[u8], f: impl FnOnce(&mut Space, u64) -> i32) -> i32 {
        if key.is_empty() {
            return -7;
        }
        STORE.with(|s| {
            let mut s = s.borrow_mut();
            s.1 += 1;
            let version = s.1;
            f(s.0.entry(ns.to_vec()).or_default(), version)
        })
    }

    /// Whether the conditions hold (ResultConflict when not).
    fn holds(cur: Option<&(Vec<u8>, u64)>, if_version: u64, if_absent: bool) -> bool {
        !(if_absent && cur.is_some()) && (if_version == 0 || cur.map(|c| c.1) == Some(if_version))
    }

    pub(crate) fn state_get(ns: &[u8], key: &[u8], buf: &mut [u8], version: &mut u64) -> i32 {
        with(ns, key, |m, _| match m.get(key) {
            None => -1,
            Some((v, ver)) => {
                *version = *ver;
                if v.len() <= buf.len() {
                    buf[..v.len()].copy_from_slice(v);
                }
                v.len() as i32
            }
        })
    }

    pub(crate) fn state_set(ns: &[u8], key: &[u8], value: &[u8], ttl_ms: i64, if_version: u64, flags: i32) -> i32 {
        if ttl_ms < 0 || flags & !1 != 0 {
            return -7;
        }
        with(ns, key, |m, version| {
            if !holds(m.get(key), if_version, flags & 1 != 0) {
                return -10;
            }
            m.insert(key.to_vec(), (value.to_vec(), version));
            0
        })
    }

    pub(crate) fn state_delete(ns: &[u8], key: &[u8], if_version: u64) -> i32 {
        with(ns, key, |m, _| {
            if !holds(m.get(key), if_version, false) {
                return -10;
            }
            m.remove(key).is_some() as i32
        })
    }

    pub(crate) fn state_add(ns: &[u8], key: &[u8], delta: i64) -> (i64, i32) {
        let mut sum = 0;
        let r = with(ns, key, |m, version| {
            let n = match m.get(key) {
                None => 0,
                Some((v, _)) => match std::str::from_utf8(v).ok().and_then(|s| s.parse::<i64>().ok()) {
                    Some(n) => n,
                    None => return -5,
                },
            };
            match n.checked_add(delta) {
                Some(s) => sum = s,
                None => return -5,
            }
            m.insert(key.to_vec(), (sum.to_string().into_bytes(), version));
            0
        });
        (sum, r)
    }

    pub(crate) fn state_list(ns: &[u8], prefix: &[u8], after: &[u8], buf: &mut [u8]) -> i32 {
        STORE.with(|s| {
            let s = s.borrow();
            let mut page = Vec::new();
            let mut more = false;
            let keys = s.0.get(ns).into_iter().flat_map(|m| m.keys()).filter(|k| k.starts_with(prefix) && k.as_slice() > after);
            for (i, k) in keys.enumerate() {
                if i == 256 || page.len() + 5 + k.len() + 6 > buf.len() {
                    more = true;
                    break;
                }
                page.push(1u8);
                page.extend_from_slice(&(k.len() as u32).to_le_bytes());
                page.extend_from_slice(k);
            }
            if more {
                if page.is_empty() {
                    return -8;
                }
                page.extend_from_slice(&[2, 1, 0, 0, 0, 1]);
            }
            buf[..page.len()].copy_from_slice(&page);
            page.len() as i32
        })
    }
}

/// Calls get with a buffer, and again with one large enough when the value
/// did not fit (get returns the value's length). Ok(None) when the key is
/// not set.
pub(crate) fn read_sized(get: impl Fn(&mut [u8]) -> i32) -> Result<Option<Vec<u8>>, i32> {
    let mut buf = vec![0u8; 256];
    for _ in 0..2 {
        let n = get(&mut buf);
        if n == NOT_FOUND {
            return Ok(None);
        }
        if n < 0 {
            return Err(n);
        }
        if n as usize <= buf.len() {
            buf.truncate(n as usize);
            return Ok(Some(buf));
        }
        buf = vec![0u8; n as usize];
    }
    Err(-8)
}
