//! cmdhost guest SDK for Rust: write command handlers that cmdhost serves
//! over MQTT, as a WebAssembly reactor (`cdylib`, target `wasm32-wasi`).
//!
//! It is a thin layer over the ABI (abi/ABI.md in the cmdhost repository)
//! with no dependency but `std`: the envelope codec, the host imports, and
//! the three exports the host calls, which [`plugin!`] generates.
//!
//! ```ignore
//! use cmdhost::{Command, Request, Response, Error};
//!
//! fn greet(req: &Request) -> Result<Response, Error> {
//!     Ok(Response::new([b"hello ".as_slice(), &req.payload].concat()))
//! }
//!
//! fn commands() -> Vec<Command> {
//!     vec![Command::new("greet", greet).idempotent().response_ttl(std::time::Duration::from_secs(60))]
//! }
//!
//! cmdhost::plugin!(commands);
//! ```
//!
//! Build: `cargo build --release --target wasm32-wasip1` (`wasm32-wasi`
//! before Rust 1.78) with this crate as a path dependency, or with rustc
//! alone: `rustc --edition 2021 --target wasm32-wasi --crate-type cdylib -O
//! --extern cmdhost=libcmdhost.rlib lib.rs` (README.md shows both).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod envelope;
mod host;
mod http;
mod invoke;
mod publish;
mod state;

#[cfg(not(target_arch = "wasm32"))]
pub use http::{reset_test_http, set_test_http};
pub use http::{http, HttpError, HttpReason, HttpRequest, HttpResponse};
pub use invoke::{call_command, fan_out, Call, CallError, CallResult, Outcome, Reason, Strategy, Sync};
#[cfg(not(target_arch = "wasm32"))]
pub use publish::take_published;
pub use publish::{publish, Event, Message, PublishError};
#[cfg(not(target_arch = "wasm32"))]
pub use state::reset_test_state;
pub use state::{shared_state, state, ListPage, SetOptions, StateError, StateSpace};

/// The ABI version this SDK speaks.
pub const ABI_VERSION: u32 = 1;

/// One request, as the host hands it over (ABI section 8).
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub command: String,
    pub payload: Vec<u8>,
    pub content_type: String,
    /// MQTT payload format indicator: 0 bytes, 1 UTF-8.
    pub format: u8,
    /// The invoker's user properties, the protocol's removed.
    pub metadata: BTreeMap<String, String>,
    /// Values of the topic pattern's `{token}` levels.
    pub topic_tokens: BTreeMap<String, String>,
    pub invoker_id: String,
    pub correlation_id: Vec<u8>,
    /// When the host cuts the call, in Unix nanoseconds; None: never.
    pub deadline_unix_nanos: Option<i64>,
    pub executor_id: String,
    /// The run's number: 1, then 2 and up for retries after a timeout.
    pub attempt: u32,
    /// Who sent the request, as the host verified it (ABI section 8,
    /// tags 12 and 13); empty when the host knows no verified caller.
    /// Unlike `invoker_id`, which the invoker wrote, no client chooses it.
    pub caller: Caller,
}

/// The verified caller of a request (abi.Caller): the user name and the
/// client id the broker authenticated, each "" when unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    pub user: String,
    pub client_id: String,
}

impl Caller {
    /// Whether the host knows who sent the request.
    pub fn verified(&self) -> bool {
        !self.user.is_empty() || !self.client_id.is_empty()
    }
}

impl Request {
    /// How long the call has left before the host cuts it; None when it
    /// has no deadline.
    pub fn remaining(&self) -> Option<Duration> {
        let deadline = self.deadline_unix_nanos?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i64).unwrap_or(0);
        Some(Duration::from_nanos(deadline.saturating_sub(now).max(0) as u64))
    }
}

/// A successful reply (200, or 204 with [`Response::no_content`]). Errors
/// are [`Error`]s.
#[derive(Debug, Clone, Default)]
pub struct Response {
    pub payload: Vec<u8>,
    pub content_type: String,
    pub format: u8,
    /// User properties added to the reply (keys must not start with `__`).
    pub metadata: BTreeMap<String, String>,
    /// How long this reply may be reused, overriding the command's
    /// declared TTL; Some(0): not at all; None: the declared TTL.
    pub ttl: Option<Duration>,
    no_content: bool,
}

impl Response {
    /// A 200 reply with payload.
    pub fn new(payload: impl Into<Vec<u8>>) -> Response {
        Response { payload: payload.into(), ..Default::default() }
    }
    /// A 200 reply with a UTF-8 payload, content type text/plain.
    pub fn text(s: &str) -> Response {
        Response { payload: s.as_bytes().to_vec(), content_type: "text/plain".into(), format: 1, ..Default::default() }
    }
    /// A 204 reply: no payload.
    pub fn no_content() -> Response {
        Response { no_content: true, ..Default::default() }
    }
    pub fn with_content_type(mut self, ct: &str) -> Response {
        self.content_type = ct.into();
        self
    }
    pub fn with_metadata(mut self, key: &str, value: &str) -> Response {
        self.metadata.insert(key.into(), value.into());
        self
    }
    pub fn with_ttl(mut self, ttl: Duration) -> Response {
        self.ttl = Some(ttl);
        self
    }
}

/// A handler's failure: an application error (500, the handler ran and
/// failed) or a protocol status about the request (400, 415).
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    App(String),
    Status { status: u32, message: String, prop_name: String, prop_value: String },
}

impl Error {
    /// An application error: 500 with the message, marked as the handler's.
    pub fn app(msg: impl Into<String>) -> Error {
        Error::App(msg.into())
    }
    /// 400: the payload is invalid.
    pub fn invalid_payload(msg: impl Into<String>) -> Error {
        Error::Status { status: 400, message: msg.into(), prop_name: String::new(), prop_value: String::new() }
    }
    /// 400 naming the offending request property.
    pub fn invalid_property(msg: impl Into<String>, name: &str, value: &str) -> Error {
        Error::Status { status: 400, message: msg.into(), prop_name: name.into(), prop_value: value.into() }
    }
    /// 415: the content type is not one the command takes.
    pub fn unsupported_content_type(ct: &str) -> Error {
        Error::Status { status: 415, message: "unsupported content type".into(), prop_name: "Content Type".into(), prop_value: ct.into() }
    }
}

impl<E: std::fmt::Display> From<E> for Error {
    fn from(e: E) -> Error {
        Error::App(e.to_string())
    }
}

/// A handler: one request in, a reply or an error out.
pub type Handler = fn(&Request) -> Result<Response, Error>;

/// A command the plugin serves, with its settings (ABI section 10).
#[derive(Clone)]
pub struct Command {
    name: String,
    handler: Handler,
    idempotent: bool,
    ttl: Duration,
    content_types: Vec<String>,
    timeout: Duration,
    topic: String,
}

impl Command {
    pub fn new(name: &str, handler: Handler) -> Command {
        Command { name: name.into(), handler, idempotent: false, ttl: Duration::ZERO, content_types: Vec::new(), timeout: Duration::ZERO, topic: String::new() }
    }
    /// Running it twice with the same input is harmless: the host may
    /// reuse its replies.
    pub fn idempotent(mut self) -> Command {
        self.idempotent = true;
        self
    }
    /// How long a reply may be reused (idempotent commands only).
    pub fn response_ttl(mut self, ttl: Duration) -> Command {
        self.ttl = ttl;
        self
    }
    /// The request content types it accepts; the host answers 415 to others.
    pub fn content_types(mut self, types: &[&str]) -> Command {
        self.content_types = types.iter().map(|t| t.to_string()).collect();
        self
    }
    /// Its default execution timeout.
    pub fn timeout(mut self, d: Duration) -> Command {
        self.timeout = d;
        self
    }
    /// Its request topic pattern (default `rpc/{executorId}/{commandName}`).
    pub fn topic(mut self, pattern: &str) -> Command {
        self.topic = pattern.into();
        self
    }
}

/// Log levels, as the host's (Go's log/slog).
#[derive(Debug, Clone, Copy)]
pub enum Level {
    Debug = -4,
    Info = 0,
    Warn = 4,
    Error = 8,
}

/// Writes one line to the host's log, attributed to the plugin.
pub fn log(level: Level, msg: &str) {
    host::log(level as i32, msg.as_bytes());
}
pub fn debug(msg: &str) {
    log(Level::Debug, msg)
}
pub fn info(msg: &str) {
    log(Level::Info, msg)
}
pub fn warn(msg: &str) {
    log(Level::Warn, msg)
}
pub fn error(msg: &str) {
    log(Level::Error, msg)
}

/// The operator's configuration value for key.
pub fn config(key: &str) -> Option<String> {
    host::read_sized(|buf| host::config_get(key.as_bytes(), buf)).ok().flatten().map(|v| String::from_utf8_lossy(&v).into_owned())
}

/// Errors of the plugin's variables.
#[derive(Debug, Clone, PartialEq)]
pub enum VarError {
    /// The plugin's variable space is full.
    Limit,
    /// The key is empty or too long, or the value too long.
    TooLarge,
    /// var_add on a value that is not a decimal integer.
    NotInteger,
    Other(i32),
}

impl std::fmt::Display for VarError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            VarError::Limit => write!(f, "plugin variable space is full"),
            VarError::TooLarge => write!(f, "variable key or value too large"),
            VarError::NotInteger => write!(f, "variable is not a decimal integer"),
            VarError::Other(r) => write!(f, "host call failed with result {}", r),
        }
    }
}

fn var_result(r: i32) -> Result<(), VarError> {
    match r {
        r if r >= 0 => Ok(()),
        -3 => Err(VarError::Limit),
        -2 => Err(VarError::TooLarge),
        -5 => Err(VarError::NotInteger),
        r => Err(VarError::Other(r)),
    }
}

/// A plugin variable: kept by the host, shared by every instance.
pub fn get_var(key: &str) -> Result<Option<Vec<u8>>, VarError> {
    host::read_sized(|buf| host::var_get(key.as_bytes(), buf)).map_err(VarError::Other)
}

/// Sets a plugin variable.
pub fn set_var(key: &str, value: &[u8]) -> Result<(), VarError> {
    var_result(host::var_set(key.as_bytes(), value))
}

/// Adds delta to a variable holding a decimal integer (absent reads as 0)
/// and returns the sum; atomic across all instances.
pub fn add_var(key: &str, delta: i64) -> Result<i64, VarError> {
    let (n, r) = host::var_add(key.as_bytes(), delta);
    var_result(r).map(|_| n)
}

#[doc(hidden)]
pub fn __describe(commands: fn() -> Vec<Command>) -> i32 {
    let mut d = envelope::Writer::new();
    d.u32(1, ABI_VERSION);
    for c in registry(commands) {
        let mut w = envelope::Writer::new();
        w.string(1, &c.name);
        if c.idempotent {
            w.bool(2, true);
        }
        if !c.ttl.is_zero() {
            w.ms(3, c.ttl);
        }
        for ct in &c.content_types {
            w.string(4, ct);
        }
        if !c.timeout.is_zero() {
            w.ms(5, c.timeout);
        }
        if !c.topic.is_empty() {
            w.string(6, &c.topic);
        }
        d.bytes(2, &w.finish());
    }
    if host::describe(&d.finish()) == 0 {
        0
    } else {
        1
    }
}

#[doc(hidden)]
pub fn __handle(commands: fn() -> Vec<Command>) -> i32 {
    let bytes = match host::request() {
        Some(b) => b,
        None => return 1,
    };
    let req = match envelope::decode_request(&bytes) {
        Ok(r) => r,
        Err(e) => {
            error(&format!("cmdhost sdk: the request does not decode: {}", e));
            return 2;
        }
    };
    let out = dispatch(registry(commands), &req);
    let r = host::response_write(&out);
    if r != 0 {
        let why = match r {
            -2 => format!("the response of {} bytes is over the host's response size bound (serve --max-response-bytes, operator maxResponseBytes)", out.len()),
            -7 => "the response breaks the ABI's response rules (a metadata key starting with __, a payload with 204, or text that is not UTF-8)".to_string(),
            r => format!("host call failed with result {}", r),
        };
        error(&format!("response refused by the host: {}", why));
        return 4;
    }
    0
}

/// Runs req on the command it names and encodes the reply.
fn dispatch(commands: &[Command], req: &Request) -> Vec<u8> {
    let result = match commands.iter().find(|c| c.name == req.command) {
        Some(c) => (c.handler)(req),
        None => Err(Error::app(format!("this module serves no command {:?}", req.command))),
    };
    envelope::encode_response(&result)
}

/// The commands, made once per instance (wasm runs one thread).
fn registry(commands: fn() -> Vec<Command>) -> &'static [Command] {
    static mut COMMANDS: Option<Vec<Command>> = None;
    // SAFETY: a wasm32 instance runs one thread, and the host never calls
    // into the guest while a call into it runs.
    unsafe {
        if COMMANDS.is_none() {
            COMMANDS = Some(commands());
        }
        COMMANDS.as_deref().unwrap_or(&[])
    }
}

/// Runs one request through the plugin's commands as the host would, and
/// returns the decoded reply: for handlers' native unit tests (host calls
/// such as config and variables find nothing off wasm; the state store is
/// an in-memory stand-in, [`reset_test_state`], published messages are
/// kept for [`take_published`], and [`set_test_http`] answers HTTP).
pub fn invoke_for_test(commands: fn() -> Vec<Command>, req: &Request) -> Result<Response, Error> {
    let list = commands();
    match list.iter().find(|c| c.name == req.command) {
        Some(c) => (c.handler)(req),
        None => Err(Error::app(format!("this module serves no command {:?}", req.command))),
    }
}

/// Generates the module's exports from a function returning its commands:
/// `cmdhost::plugin!(commands);` at the top level of the plugin's crate.
#[macro_export]
macro_rules! plugin {
    ($commands:path) => {
        #[no_mangle]
        pub extern "C" fn cmdhost_abi_version() -> i32 {
            $crate::ABI_VERSION as i32
        }
        #[no_mangle]
        pub extern "C" fn cmdhost_describe() -> i32 {
            $crate::__describe($commands)
        }
        #[no_mangle]
        pub extern "C" fn cmdhost_handle() -> i32 {
            $crate::__handle($commands)
        }
    };
}
