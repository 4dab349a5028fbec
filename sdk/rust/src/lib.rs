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

pub use http::{http, HttpError, HttpReason, HttpRequest, HttpResponse};
#[cfg(not(target_arch = "wasm32"))]
pub use http::{reset_test_http, set_test_http};
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
    /// The topic a trigger's message came on (ABI section 20; its filter's
    /// `{token}` levels' values are in `topic_tokens`); empty for a
    /// command's request.
    pub topic: String,
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

/// A trigger's handler ([`Command::on_message`]): one message in; Ok: it
/// is handled (the host commits what the call wrote and published, and
/// acknowledges the message); an error (or a panic, the deadline) fails
/// this attempt: the host runs it again, up to the trigger's attempts,
/// then drops the message.
pub type MessageHandler = fn(&Request) -> Result<(), Error>;

/// What a command runs.
#[derive(Clone, Copy)]
enum Run {
    Request(Handler),
    Message(MessageHandler),
}

/// A command the plugin serves, or a trigger, with its settings (ABI
/// section 10).
#[derive(Clone)]
pub struct Command {
    name: String,
    run: Run,
    idempotent: bool,
    ttl: Duration,
    content_types: Vec<String>,
    timeout: Duration,
    topic: String,
    trigger: String,
}

impl Command {
    pub fn new(name: &str, handler: Handler) -> Command {
        Command::of(name, Run::Request(handler))
    }
    fn of(name: &str, run: Run) -> Command {
        Command {
            name: name.into(),
            run,
            idempotent: false,
            ttl: Duration::ZERO,
            content_types: Vec::new(),
            timeout: Duration::ZERO,
            topic: String::new(),
            trigger: String::new(),
        }
    }
    /// A trigger (ABI section 20): handler runs for each message published
    /// on the topic filter, whose levels are literal, a `{token}` (any one
    /// level, its value in the message's `topic_tokens`), `+` (any one
    /// level) or, last, `#` (any levels). The host subscribes only when the
    /// plugin's operator file confirms it by name (`"triggers": {"NAME":
    /// {}}`), and never to its own topics (a first level of rpc, cmdhost,
    /// clients, statestore, or one starting with $). Its name is
    /// [`trigger_name`]'s unless `.name` gives one; `.timeout`,
    /// `.idempotent` and `.content_types` apply as to a command (a message
    /// of another content type is dropped unrun).
    pub fn on_message(filter: &str, handler: MessageHandler) -> Command {
        Command { trigger: filter.into(), ..Command::of(&trigger_name(filter), Run::Message(handler)) }
    }
    /// Names it: a trigger's operator file confirms it by this name.
    pub fn name(mut self, name: &str) -> Command {
        self.name = name.into();
        self
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
    if host::describe(&description(registry(commands))) == 0 {
        0
    } else {
        1
    }
}

/// The Description envelope (ABI section 10).
fn description(commands: &[Command]) -> Vec<u8> {
    let mut d = envelope::Writer::new();
    d.u32(1, ABI_VERSION);
    for c in commands {
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
        if !c.trigger.is_empty() {
            w.string(7, &c.trigger);
        }
        d.bytes(2, &w.finish());
    }
    d.finish()
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
    envelope::encode_response(&run(commands, req))
}

/// Runs req on the command it names: a trigger's handled message is a 204.
fn run(commands: &[Command], req: &Request) -> Result<Response, Error> {
    match commands.iter().find(|c| c.name == req.command).map(|c| c.run) {
        Some(Run::Request(h)) => h(req),
        Some(Run::Message(h)) => h(req).map(|_| Response::no_content()),
        None => Err(Error::app(format!("this module serves no command {:?}", req.command))),
    }
}

/// The name a trigger on filter has when `.name` gives none: the filter's
/// levels joined with '.', a `{token}` level giving its name, `+` "any" and
/// `#` "all": "sensors/{device}/temp" is "sensors.device.temp".
pub fn trigger_name(filter: &str) -> String {
    let levels: Vec<&str> = filter
        .split('/')
        .map(|l| match l {
            "+" => "any",
            "#" => "all",
            l if l.len() >= 2 && l.starts_with('{') && l.ends_with('}') => &l[1..l.len() - 1],
            l => l,
        })
        .collect();
    levels.join(".")
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
    run(&commands(), req)
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

#[cfg(test)]
mod tests {
    use super::*;
    use envelope::records;

    fn handled(m: &Request) -> Result<(), Error> {
        match m.payload.as_slice() {
            b"bad" => Err(Error::app(format!("bad reading on {}", m.topic))),
            _ => Ok(()),
        }
    }

    fn echo(req: &Request) -> Result<Response, Error> {
        Ok(Response::new(req.payload.clone()))
    }

    fn commands() -> Vec<Command> {
        vec![
            Command::on_message("sensors/{device}/temp", handled).name("on-temp").timeout(Duration::from_secs(2)),
            Command::on_message("alarms/+/#", handled),
            Command::new("t-echo", echo),
        ]
    }

    /// A trigger is a command of the description with its filter (tag 7),
    /// named by .name or after its filter.
    #[test]
    fn triggers_in_the_description() {
        let d = description(&commands());
        let recs = records(&d).unwrap();
        assert_eq!(recs[0], (1, &1u32.to_le_bytes()[..]));
        let cmds: Vec<Vec<(u8, &[u8])>> = recs[1..]
            .iter()
            .map(|(tag, v)| {
                assert_eq!(*tag, 2);
                records(v).unwrap()
            })
            .collect();
        assert_eq!(cmds[0], vec![(1, &b"on-temp"[..]), (5, &2000i64.to_le_bytes()[..]), (7, &b"sensors/{device}/temp"[..])]);
        assert_eq!(cmds[1], vec![(1, &b"alarms.any.all"[..]), (7, &b"alarms/+/#"[..])]);
        assert_eq!(cmds[2], vec![(1, &b"t-echo"[..])]);
    }

    /// A trigger's handled message is a 204, its error an application
    /// error; the handler reads the message's topic.
    #[test]
    fn triggers_run() {
        let mut msg = Request { command: "on-temp".into(), topic: "sensors/d1/temp".into(), payload: b"21.5".to_vec(), ..Default::default() };
        let ok = invoke_for_test(commands, &msg).expect("handled");
        assert_eq!(envelope::encode_response(&Ok(ok)), envelope::encode_response(&Ok(Response::no_content())));
        msg.payload = b"bad".to_vec();
        assert_eq!(invoke_for_test(commands, &msg).unwrap_err(), Error::app("bad reading on sensors/d1/temp"));
        let req = Request { command: "t-echo".into(), payload: b"hi".to_vec(), ..Default::default() };
        assert_eq!(invoke_for_test(commands, &req).expect("echo").payload, b"hi");
    }

    #[test]
    fn trigger_names() {
        for (filter, want) in [("sensors/{device}/temp", "sensors.device.temp"), ("alarms/+/#", "alarms.any.all"), ("a/{}/b", "a..b"), ("x", "x")] {
            assert_eq!(trigger_name(filter), want, "{}", filter);
        }
    }
}
