//! Nested invocation (ABI section 16): a handler calling other commands,
//! of this host or of another executor on the same broker.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::envelope::{entry, fixed, records, text, Writer};
use crate::host;

/// One call of a command.
#[derive(Debug, Clone, Default)]
pub struct Call {
    pub command: String,
    /// Another executor's id; empty: a command of this host.
    pub executor: String,
    pub payload: Vec<u8>,
    pub content_type: String,
    pub format: u8,
    pub metadata: BTreeMap<String, String>,
    /// Requested timeout; None: the caller's deadline alone.
    pub timeout: Option<Duration>,
}

impl Call {
    pub fn new(command: &str, payload: impl Into<Vec<u8>>) -> Call {
        Call { command: command.into(), payload: payload.into(), ..Default::default() }
    }
}

/// How a branch ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// The child answered, whatever its status.
    Done,
    /// Its deadline cut it (status 408).
    TimedOut,
    /// The sync ended before it answered; it was cancelled.
    NotArrived,
    /// No answer: see the reason.
    Error,
    Unknown(u8),
}

/// Why a branch or an invocation failed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reason {
    None,
    Invalid,
    Unavailable,
    Cycle,
    Depth,
    UnknownCommand,
    HostFault,
    Canceled,
    SyncTimeout,
    Unknown(u8),
}

impl Reason {
    fn from(v: u8) -> Reason {
        match v {
            0 => Reason::None,
            1 => Reason::Invalid,
            2 => Reason::Unavailable,
            3 => Reason::Cycle,
            4 => Reason::Depth,
            5 => Reason::UnknownCommand,
            6 => Reason::HostFault,
            7 => Reason::Canceled,
            8 => Reason::SyncTimeout,
            v => Reason::Unknown(v),
        }
    }
}

/// A call's result.
#[derive(Debug, Clone)]
pub struct CallResult {
    pub name: String,
    pub outcome: Outcome,
    pub reason: Reason,
    pub status: u32,
    pub app_error: bool,
    pub message: String,
    pub payload: Vec<u8>,
    pub content_type: String,
    pub format: u8,
    pub metadata: BTreeMap<String, String>,
    pub elapsed: Duration,
    /// What the child was given; None: unbounded.
    pub budget: Option<Duration>,
}

/// A nested invocation that failed as a whole.
#[derive(Debug, Clone)]
pub struct CallError {
    pub reason: Reason,
    pub message: String,
    /// The branches' results, when the host gave them (a sync timeout).
    pub results: Vec<CallResult>,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "nested call failed ({:?}): {}", self.reason, self.message)
    }
}

/// How long a fan-out waits for its branches.
#[derive(Debug, Clone, Copy)]
pub enum Strategy {
    All,
    Any,
    MOfN(u32),
}

/// A fan-out's sync rule.
#[derive(Debug, Clone, Copy)]
pub struct Sync {
    pub strategy: Strategy,
    /// Wait time from the first arrival; None: the host's default.
    pub timeout: Option<Duration>,
    /// On the sync timeout, fail instead of going on with what arrived.
    pub fail_on_timeout: bool,
}

impl Default for Sync {
    fn default() -> Sync {
        Sync { strategy: Strategy::All, timeout: None, fail_on_timeout: false }
    }
}

/// Calls one command and waits for its result; an error only when the
/// invocation failed as a whole (a cycle, the depth limit, no nested
/// calls on this host...).
pub fn call_command(call: Call) -> Result<CallResult, CallError> {
    let mut results = fan_out(Sync::default(), vec![(String::new(), call)])?;
    results.pop().ok_or(CallError { reason: Reason::HostFault, message: "the host returned no result".into(), results: Vec::new() })
}

/// Runs the named calls at once and waits for them as sync says; the
/// results come in the calls' order.
pub fn fan_out(sync: Sync, calls: Vec<(String, Call)>) -> Result<Vec<CallResult>, CallError> {
    let mut w = Writer::new();
    for (name, c) in &calls {
        let mut b = Writer::new();
        b.string(1, name);
        b.string(2, &c.command);
        if !c.executor.is_empty() {
            b.string(3, &c.executor);
        }
        if !c.payload.is_empty() {
            b.bytes(4, &c.payload);
        }
        if !c.content_type.is_empty() {
            b.string(5, &c.content_type);
        }
        if c.format != 0 {
            b.u8(6, c.format);
        }
        b.map(7, &c.metadata);
        if let Some(t) = c.timeout {
            b.ms(8, t);
        }
        w.bytes(1, &b.finish());
    }
    let mut s = Writer::new();
    match sync.strategy {
        Strategy::All => {}
        Strategy::Any => s.u8(1, 1),
        Strategy::MOfN(m) => {
            s.u8(1, 2);
            s.u32(2, m);
        }
    }
    if let Some(t) = sync.timeout {
        s.ms(3, t);
    }
    if sync.fail_on_timeout {
        s.u8(4, 1);
    }
    w.bytes(2, &s.finish());
    let out = host::invoke(&w.finish()).map_err(|r| CallError {
        reason: if r == -6 { Reason::Canceled } else { Reason::HostFault },
        message: format!("invoke failed with result {}", r),
        results: Vec::new(),
    })?;
    decode_result(&out).map_err(|e| CallError { reason: Reason::HostFault, message: e, results: Vec::new() })?
}

fn decode_result(b: &[u8]) -> Result<Result<Vec<CallResult>, CallError>, String> {
    let mut failure = 0u8;
    let mut message = String::new();
    let mut results = Vec::new();
    for (tag, v) in records(b)? {
        match tag {
            1 => failure = fixed::<1>(v)?[0],
            2 => message = text(v)?,
            3 => results.push(decode_branch(v)?),
            _ => {}
        }
    }
    if failure != 0 {
        return Ok(Err(CallError { reason: Reason::from(failure), message, results }));
    }
    Ok(Ok(results))
}

fn decode_branch(b: &[u8]) -> Result<CallResult, String> {
    let mut r = CallResult {
        name: String::new(), outcome: Outcome::Done, reason: Reason::None, status: 0, app_error: false,
        message: String::new(), payload: Vec::new(), content_type: String::new(), format: 0,
        metadata: BTreeMap::new(), elapsed: Duration::ZERO, budget: None,
    };
    for (tag, v) in records(b)? {
        match tag {
            1 => r.name = text(v)?,
            2 => {
                r.outcome = match fixed::<1>(v)?[0] {
                    0 => Outcome::Done,
                    1 => Outcome::TimedOut,
                    2 => Outcome::NotArrived,
                    3 => Outcome::Error,
                    o => Outcome::Unknown(o),
                }
            }
            3 => r.reason = Reason::from(fixed::<1>(v)?[0]),
            4 => r.status = u32::from_le_bytes(fixed::<4>(v)?),
            5 => r.app_error = fixed::<1>(v)?[0] == 1,
            6 => r.message = text(v)?,
            7 => r.payload = v.to_vec(),
            8 => r.content_type = text(v)?,
            9 => r.format = fixed::<1>(v)?[0],
            10 => {
                let (k, val) = entry(v)?;
                r.metadata.insert(k, val);
            }
            11 => r.elapsed = Duration::from_nanos(i64::from_le_bytes(fixed::<8>(v)?).max(0) as u64),
            12 => r.budget = Some(Duration::from_nanos(i64::from_le_bytes(fixed::<8>(v)?).max(0) as u64)),
            _ => {}
        }
    }
    Ok(r)
}
