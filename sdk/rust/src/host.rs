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
    let n = unsafe { imports::invoke(inv.as_ptr(), inv.len() as i32) };
    if n < 0 {
        return Err(n);
    }
    let mut buf = vec![0u8; n as usize];
    let got = unsafe { imports::invoke_result_read(buf.as_mut_ptr(), n) };
    if got != n {
        return Err(got.min(-1));
    }
    Ok(buf)
}

// Off wasm: nothing is there. A handler's native unit test sees no config,
// no variables and no nested calls, and its log goes to stderr.
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
