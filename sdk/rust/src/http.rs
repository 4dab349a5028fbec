//! Outbound HTTP (ABI section 19): a handler calls an HTTP API on a host
//! its operator file grants. A response is a response whatever its status
//! (a 404 or a 500 is not an error); an [`HttpError`], with its reason, is
//! a request that got none. The guest is blocked while the request runs;
//! the call's deadline always cuts it.
//!
//! HTTP is not transactional: a request a call made has happened even if
//! the call then fails or runs again (at least once). For a command that
//! is not idempotent the host adds an `Idempotency-Key` header (unless the
//! request sets one), the same at every run of the same request.

use std::time::Duration;

use crate::envelope::{ceil_millis, fixed, records, Writer};
use crate::host;

/// A request to send: built with [`HttpRequest::new`] (or `get`, `post`)
/// and `.header(name, value)`, `.body(b)`, `.timeout(d)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpRequest {
    /// Empty: GET. CONNECT and TRACE are refused.
    pub method: String,
    /// An absolute http or https URL; the grant decides which.
    pub url: String,
    /// Name and value, in order; a name may repeat (each value is sent).
    /// The host sets Host, Content-Length, Transfer-Encoding and the
    /// connection's headers itself (a request that names one is invalid).
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Bounds the request, redirects and reading the response included;
    /// None: the grant's (10 s by default), and a longer one is cut to it.
    /// The call's deadline always bounds it too.
    pub timeout: Option<Duration>,
}

impl HttpRequest {
    pub fn new(method: &str, url: &str) -> HttpRequest {
        HttpRequest { method: method.into(), url: url.into(), ..Default::default() }
    }
    pub fn get(url: &str) -> HttpRequest {
        HttpRequest::new("GET", url)
    }
    pub fn post(url: &str, body: impl Into<Vec<u8>>) -> HttpRequest {
        HttpRequest::new("POST", url).body(body)
    }
    /// Adds a header value: a name given twice is sent with both values.
    pub fn header(mut self, name: &str, value: &str) -> HttpRequest {
        self.headers.push((name.into(), value.into()));
        self
    }
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> HttpRequest {
        self.body = body.into();
        self
    }
    pub fn timeout(mut self, d: Duration) -> HttpRequest {
        self.timeout = Some(d);
        self
    }
}

/// A server's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u32,
    /// Name and value, one pair a value, names as Go writes them
    /// (`Content-Type`).
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The URL that answered: the request's, or the last redirect's.
    pub url: String,
}

impl HttpResponse {
    /// The first value of the header name (any case); None without one.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.header_values(name).into_iter().next()
    }
    /// Every value of the header name (any case), in order.
    pub fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }
}

/// Why a request got no response (ABI section 19's reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpReason {
    /// The request breaks the rules, or its URL does not parse.
    Invalid,
    /// The grant does not cover the scheme, host, port or method; the
    /// address is not public and the grant does not name it; a redirect to
    /// any of these; the operator file grants no HTTP.
    Denied,
    /// The name does not resolve.
    Dns,
    /// No connection: refused, unreachable, reset.
    Connect,
    /// The TLS handshake failed.
    Tls,
    /// No response within the request's timeout (or the grant's).
    Timeout,
    /// The request's body, or the response's headers or body, over the bound.
    TooLarge,
    /// Over the call's bound of requests or the plugin's rate.
    Limit,
    /// More redirects than the grant follows.
    Redirects,
    /// The host offers no outbound HTTP.
    Unavailable,
    /// Anything else: a malformed response, a connection closed mid-body.
    Failed,
    /// A reason of a later host.
    Unknown(u8),
}

impl HttpReason {
    fn from(v: u8) -> HttpReason {
        use HttpReason::*;
        match v {
            1 => Invalid,
            2 => Denied,
            3 => Dns,
            4 => Connect,
            5 => Tls,
            6 => Timeout,
            7 => TooLarge,
            8 => Limit,
            9 => Redirects,
            10 => Unavailable,
            11 => Failed,
            v => Unknown(v),
        }
    }
    /// The reason's ABI value.
    pub fn code(self) -> u8 {
        use HttpReason::*;
        match self {
            Invalid => 1,
            Denied => 2,
            Dns => 3,
            Connect => 4,
            Tls => 5,
            Timeout => 6,
            TooLarge => 7,
            Limit => 8,
            Redirects => 9,
            Unavailable => 10,
            Failed => 11,
            Unknown(v) => v,
        }
    }
    /// The reason's ABI name: `invalid`, `denied`, `dns`, `connect`, `tls`,
    /// `timeout`, `too_large`, `limit`, `redirects`, `unavailable`, `failed`
    /// (`unknown` for a later host's).
    pub fn as_str(self) -> &'static str {
        use HttpReason::*;
        match self {
            Invalid => "invalid",
            Denied => "denied",
            Dns => "dns",
            Connect => "connect",
            Tls => "tls",
            Timeout => "timeout",
            TooLarge => "too_large",
            Limit => "limit",
            Redirects => "redirects",
            Unavailable => "unavailable",
            Failed => "failed",
            Unknown(_) => "unknown",
        }
    }
}

/// A request that got no response: its reason and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    pub reason: HttpReason,
    pub message: String,
}

impl HttpError {
    pub fn new(reason: HttpReason, message: impl Into<String>) -> HttpError {
        HttpError { reason, message: message.into() }
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.message.is_empty() {
            return write!(f, "http: {}", self.reason.as_str());
        }
        write!(f, "http: {}: {}", self.reason.as_str(), self.message)
    }
}

impl std::error::Error for HttpError {}

/// Sends r and returns the response, or why there is none.
pub fn http(r: &HttpRequest) -> Result<HttpResponse, HttpError> {
    let out = host::http(&encode_request(r)).map_err(|code| {
        HttpError::new(HttpReason::Failed, format!("the host refused the request: result {} (outside a handler, or the call's deadline passed)", code))
    })?;
    decode_result(&out).map_err(|e| HttpError::new(HttpReason::Failed, format!("the http result does not decode: {}", e)))?
}

/// The HTTPRequest envelope.
pub(crate) fn encode_request(r: &HttpRequest) -> Vec<u8> {
    let mut w = Writer::new();
    if !r.method.is_empty() {
        w.string(1, &r.method);
    }
    w.string(2, &r.url);
    for (name, value) in &r.headers {
        w.entry(3, name, value.as_bytes());
    }
    if !r.body.is_empty() {
        w.bytes(4, &r.body);
    }
    if let Some(d) = r.timeout.filter(|d| !d.is_zero()) {
        w.i64(5, ceil_millis(d));
    }
    w.finish()
}

/// A header entry, `klen u32 | name | value`: unlike a map's, a name may
/// repeat; a value not UTF-8 (a server's Latin-1) is read lossily.
fn header(v: &[u8]) -> Result<(String, String), String> {
    if v.len() < 4 {
        return Err("a header entry is cut short".into());
    }
    let k = u32::from_le_bytes(fixed::<4>(&v[..4])?) as usize;
    if k > v.len() - 4 {
        return Err("a header entry's name runs past it".into());
    }
    Ok((String::from_utf8_lossy(&v[4..4 + k]).into_owned(), String::from_utf8_lossy(&v[4 + k..]).into_owned()))
}

/// The HTTPResult envelope: the response, or the failure.
fn decode_result(b: &[u8]) -> Result<Result<HttpResponse, HttpError>, String> {
    let (mut failure, mut message, mut resp) = (0u8, String::new(), HttpResponse::default());
    for (tag, v) in records(b)? {
        match tag {
            1 => failure = fixed::<1>(v)?[0],
            2 => message = String::from_utf8_lossy(v).into_owned(),
            3 => resp.status = u32::from_le_bytes(fixed::<4>(v)?),
            4 => resp.headers.push(header(v)?),
            5 => resp.body = v.to_vec(),
            6 => resp.url = String::from_utf8_lossy(v).into_owned(),
            _ => {}
        }
    }
    if failure != 0 {
        return Ok(Err(HttpError::new(HttpReason::from(failure), message)));
    }
    Ok(Ok(resp))
}

/// Sets the function that answers [`http`] off wasm (in native tests), on
/// this thread; until then, and after [`reset_test_http`], every request
/// fails with [`HttpReason::Unavailable`]. No grant is checked: that is the
/// host's, with the operator file. A response of status 0 is a 200.
#[cfg(not(target_arch = "wasm32"))]
pub fn set_test_http(f: impl Fn(&HttpRequest) -> Result<HttpResponse, HttpError> + 'static) {
    standin::set(Some(Box::new(f)))
}

/// Makes every [`http`] request off wasm fail with
/// [`HttpReason::Unavailable`] again.
#[cfg(not(target_arch = "wasm32"))]
pub fn reset_test_http() {
    standin::set(None)
}

/// The stand-in off wasm: the request decoded as the host decodes it, the
/// test's function's answer encoded as the host encodes a result.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod standin {
    use std::cell::RefCell;

    use super::*;
    use crate::envelope::text;

    type Answer = Box<dyn Fn(&HttpRequest) -> Result<HttpResponse, HttpError>>;

    thread_local! {
        static ANSWER: RefCell<Option<Answer>> = RefCell::new(None);
    }

    pub(super) fn set(f: Option<Answer>) {
        ANSWER.with(|a| *a.borrow_mut() = f);
    }

    /// The headers the host sets itself: a request naming one is invalid.
    const RESERVED: [&str; 9] = ["host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"];

    fn decode_request(b: &[u8]) -> Result<HttpRequest, String> {
        let mut r = HttpRequest::default();
        for (tag, v) in records(b)? {
            match tag {
                1 => r.method = text(v)?,
                2 => r.url = text(v)?,
                3 => r.headers.push(header(v)?),
                4 => r.body = v.to_vec(),
                5 => r.timeout = Some(Duration::from_millis(i64::from_le_bytes(fixed::<8>(v)?).max(0) as u64)),
                _ => {}
            }
        }
        let m = r.method.as_str();
        if m == "CONNECT" || m == "TRACE" || r.url.is_empty() || r.url.contains(' ') {
            return Err(format!("method {:?} or URL {:?} refused", m, r.url));
        }
        if let Some((name, _)) =
            r.headers.iter().find(|(n, _)| RESERVED.contains(&n.to_ascii_lowercase().as_str()) || n.to_ascii_lowercase().starts_with("proxy-"))
        {
            return Err(format!("header {}: the host sets it", name));
        }
        Ok(r)
    }

    fn encode_result(r: &Result<HttpResponse, HttpError>) -> Vec<u8> {
        let mut w = Writer::new();
        match r {
            Err(e) => {
                w.u8(1, e.reason.code());
                if !e.message.is_empty() {
                    w.string(2, &e.message);
                }
            }
            Ok(resp) => {
                w.u32(3, resp.status);
                for (name, value) in &resp.headers {
                    w.entry(4, name, value.as_bytes());
                }
                if !resp.body.is_empty() {
                    w.bytes(5, &resp.body);
                }
                w.string(6, &resp.url);
            }
        }
        w.finish()
    }

    pub(crate) fn http(b: &[u8]) -> Result<Vec<u8>, i32> {
        let answer = match decode_request(b) {
            Err(e) => Err(HttpError::new(HttpReason::Invalid, e)),
            Ok(req) => ANSWER.with(|a| match &*a.borrow() {
                None => Err(HttpError::new(HttpReason::Unavailable, "outbound HTTP is not available (native build: see cmdhost::set_test_http)")),
                Some(f) => f(&req).map(|mut resp| {
                    if resp.status == 0 {
                        resp.status = 200;
                    }
                    if resp.url.is_empty() {
                        resp.url = req.url.clone();
                    }
                    resp
                }),
            }),
        };
        Ok(encode_result(&answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace().map(|b| u8::from_str_radix(b, 16).unwrap()).collect()
    }

    /// ABI.md section 19's example, byte for byte.
    #[test]
    fn encodes_the_abi_example() {
        let r = HttpRequest::post("https://api.example.com/jobs", "hi").header("X-Tag", "a").header("X-Tag", "b").timeout(Duration::from_secs(2));
        let mut want = hex("01 04 00 00 00 50 4f 53 54 02 1c 00 00 00");
        want.extend_from_slice(b"https://api.example.com/jobs");
        want.extend(hex("03 0a 00 00 00 05 00 00 00 58 2d 54 61 67 61 03 0a 00 00 00 05 00 00 00 58 2d 54 61 67 62"));
        want.extend(hex("04 02 00 00 00 68 69 05 08 00 00 00 d0 07 00 00 00 00 00 00"));
        assert_eq!(encode_request(&r), want);
        assert_eq!(records(&encode_request(&HttpRequest::new("", "http://x"))).unwrap(), vec![(2, &b"http://x"[..])], "GET is no method record");
    }

    #[test]
    fn decodes_the_abi_examples() {
        let mut b = hex("03 04 00 00 00 c9 00 00 00 04 13 00 00 00 08 00 00 00");
        b.extend_from_slice(b"Location/jobs/7");
        b.extend(hex("05 02 00 00 00 6f 6b 99 01 00 00 00 00"));
        let resp = decode_result(&b).unwrap().unwrap();
        assert_eq!((resp.status, resp.header("location"), resp.body.as_slice()), (201, Some("/jobs/7"), &b"ok"[..]));
        let mut b = hex("01 01 00 00 00 02 02 20 00 00 00");
        b.extend_from_slice(b"host evil.example is not granted");
        assert_eq!(decode_result(&b).unwrap(), Err(HttpError::new(HttpReason::Denied, "host evil.example is not granted")));
        assert_eq!(decode_result(&hex("01 01 00 00 00 63")).unwrap().unwrap_err().reason, HttpReason::Unknown(99));
        assert!(decode_result(&hex("03 02 00 00 00 c9 00")).is_err(), "a status of two bytes");
    }

    #[test]
    fn stand_in() {
        reset_test_http();
        assert_eq!(http(&HttpRequest::get("https://api.example.com/")).unwrap_err().reason, HttpReason::Unavailable);
        set_test_http(|r| {
            if r.url.ends_with("/down") {
                return Err(HttpError::new(HttpReason::Connect, "refused"));
            }
            let tags: Vec<String> = r.headers.iter().filter(|(n, _)| n == "X-Tag").map(|(_, v)| v.clone()).collect();
            Ok(HttpResponse {
                headers: vec![("X-Seen".into(), tags.join(",")), ("Set-Cookie".into(), "a".into()), ("Set-Cookie".into(), "b".into())],
                body: [r.method.as_bytes(), b" ", &r.body].concat(),
                ..Default::default()
            })
        });
        let resp = http(&HttpRequest::post("https://api.example.com/jobs", "hi").header("X-Tag", "a").header("X-Tag", "b")).expect("a response");
        assert_eq!((resp.status, resp.body.as_slice(), resp.url.as_str()), (200, &b"POST hi"[..], "https://api.example.com/jobs"));
        assert_eq!((resp.header("x-seen"), resp.header_values("Set-Cookie")), (Some("a,b"), vec!["a", "b"]));
        assert_eq!(resp.header("absent"), None);
        assert_eq!(http(&HttpRequest::get("https://api.example.com/down")), Err(HttpError::new(HttpReason::Connect, "refused")));
        for bad in [HttpRequest::get(""), HttpRequest::new("TRACE", "https://x"), HttpRequest::get("https://x").header("Content-Length", "1")] {
            assert_eq!(http(&bad).unwrap_err().reason, HttpReason::Invalid, "{:?}", bad);
        }
        reset_test_http();
    }
}
