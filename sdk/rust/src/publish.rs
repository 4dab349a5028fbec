//! Publishing (ABI section 18): a handler sends a message — an event, an
//! alarm, a reading — to a topic its operator file grants. A command that
//! is not idempotent sends its messages once its reply is recorded, with
//! its state writes: once, and never for a call that failed; an idempotent
//! command's go out as the call runs.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::envelope::{ceil_millis, Writer};
use crate::host;

/// ABI results publish answers.
const TOO_LARGE: i32 = -2;
const LIMIT: i32 = -3;
const INVALID: i32 = -7;
const DENIED: i32 = -9;
const UNAVAILABLE: i32 = -11;

/// A message to publish: a topic name (no wildcard, no empty level) the
/// operator file grants, a payload and, optionally, a content type, user
/// properties (metadata), CloudEvents attributes (event) and an expiry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    pub topic: String,
    pub payload: Vec<u8>,
    pub content_type: String,
    /// MQTT payload format indicator: 0 bytes, 1 UTF-8.
    pub format: u8,
    /// User properties; names must not start with `__` (the protocol's),
    /// nor be `cmdhost-message-id` or, with an event, a CloudEvents
    /// attribute (the host sets those).
    pub metadata: BTreeMap<String, String>,
    /// Makes the message a CloudEvent (binary mode: the attributes as user
    /// properties, the payload as its data).
    pub event: Option<Event>,
    /// The message's expiry, in whole milliseconds rounded up; None: none.
    pub expiry: Option<Duration>,
}

impl Message {
    /// A message of payload on topic.
    pub fn new(topic: &str, payload: impl Into<Vec<u8>>) -> Message {
        Message { topic: topic.into(), payload: payload.into(), ..Default::default() }
    }
    /// A message of UTF-8 text on topic, content type text/plain.
    pub fn text(topic: &str, s: &str) -> Message {
        Message { content_type: "text/plain".into(), format: 1, ..Message::new(topic, s.as_bytes()) }
    }
    pub fn with_content_type(mut self, ct: &str) -> Message {
        self.content_type = ct.into();
        self
    }
    pub fn with_metadata(mut self, key: &str, value: &str) -> Message {
        self.metadata.insert(key.into(), value.into());
        self
    }
    pub fn with_event(mut self, e: Event) -> Message {
        self.event = Some(e);
        self
    }
    pub fn with_expiry(mut self, d: Duration) -> Message {
        self.expiry = Some(d);
        self
    }
}

/// A message's CloudEvents attributes: `ty` (the event's type, required),
/// `source` (empty: `/cmdhost/EXECUTOR/PLUGIN`), `subject`, `data_schema`,
/// each at most 512 bytes. The host adds specversion, id (the message's id)
/// and time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    pub ty: String,
    pub source: String,
    pub subject: String,
    pub data_schema: String,
}

impl Event {
    /// An event of type ty.
    pub fn new(ty: &str) -> Event {
        Event { ty: ty.into(), ..Default::default() }
    }
    pub fn with_source(mut self, s: &str) -> Event {
        self.source = s.into();
        self
    }
    pub fn with_subject(mut self, s: &str) -> Event {
        self.subject = s.into();
        self
    }
    pub fn with_data_schema(mut self, s: &str) -> Event {
        self.data_schema = s.into();
        self
    }
}

/// Why a message was not taken: a typed result, never a trap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishError {
    /// No grant of the operator file covers the topic (`"publish":
    /// {"topics": [...]}`); the host's own topics are never granted.
    Denied,
    /// Over the plugin's rate, or the outbox is full: try later.
    Limit,
    /// Over the call's bound of messages or bytes.
    TooLarge,
    /// The message breaks the rules: not a topic name, a reserved
    /// property, bad UTF-8, an event without a type.
    Invalid,
    /// The host cannot take messages now.
    Unavailable,
    /// Any other result (outside a handler's call, say).
    Other(i32),
}

impl std::fmt::Display for PublishError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            PublishError::Denied => write!(f, "publish: the operator file grants no such topic (\"publish\": {{\"topics\": [...]}})"),
            PublishError::Limit => write!(f, "publish: over the plugin's rate, or the outbox is full: try later"),
            PublishError::TooLarge => write!(f, "publish: over the call's bound of messages or bytes"),
            PublishError::Invalid => write!(f, "publish: the message breaks the rules (not a topic name, a reserved property, bad UTF-8)"),
            PublishError::Unavailable => write!(f, "publish: the host cannot take messages now"),
            PublishError::Other(r) => write!(f, "publish: host call failed with result {}", r),
        }
    }
}

impl std::error::Error for PublishError {}

/// Publishes m. For a command that is not idempotent it goes out once the
/// call's reply is recorded, with its state writes (never for a call that
/// fails), and may then arrive more than once, always with one id (the user
/// property `cmdhost-message-id`); an idempotent command's goes out as the
/// call runs. Off wasm (native tests) it is kept for [`take_published`].
pub fn publish(m: &Message) -> Result<(), PublishError> {
    match host::publish(&encode_message(m)) {
        r if r >= 0 => Ok(()),
        DENIED => Err(PublishError::Denied),
        LIMIT => Err(PublishError::Limit),
        TOO_LARGE => Err(PublishError::TooLarge),
        INVALID => Err(PublishError::Invalid),
        UNAVAILABLE => Err(PublishError::Unavailable),
        r => Err(PublishError::Other(r)),
    }
}

/// The Message envelope (ABI section 18).
pub(crate) fn encode_message(m: &Message) -> Vec<u8> {
    let mut w = Writer::new();
    w.string(1, &m.topic);
    if !m.payload.is_empty() {
        w.bytes(2, &m.payload);
    }
    if !m.content_type.is_empty() {
        w.string(3, &m.content_type);
    }
    if m.format != 0 {
        w.u8(4, m.format);
    }
    w.map(5, &m.metadata);
    if let Some(e) = &m.event {
        let mut ev = Writer::new();
        ev.string(1, &e.ty);
        for (tag, v) in [(2, &e.source), (3, &e.subject), (4, &e.data_schema)] {
            if !v.is_empty() {
                ev.string(tag, v);
            }
        }
        w.bytes(6, &ev.finish());
    }
    if let Some(d) = m.expiry.filter(|d| !d.is_zero()) {
        w.i64(7, ceil_millis(d));
    }
    w.finish()
}

/// Returns, and forgets, the messages published so far on this thread:
/// off wasm (in native tests) publish keeps each message it would hand the
/// host, after the checks the host makes whatever its grants (a topic name,
/// no reserved property, an event's type); no grant is checked.
#[cfg(not(target_arch = "wasm32"))]
pub fn take_published() -> Vec<Message> {
    host::standin::take_published()
}

/// Decodes a Message as the host does, and checks what any host refuses
/// whatever its grants (Message.Validate in the abi package); None when it
/// would refuse it (ResultInvalid). For the stand-in off wasm.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn decode_message(b: &[u8]) -> Option<Message> {
    use crate::envelope::{entry, fixed, records, text};
    let mut m = Message::default();
    for (tag, v) in records(b).ok()? {
        match tag {
            1 => m.topic = text(v).ok()?,
            2 => m.payload = v.to_vec(),
            3 => m.content_type = text(v).ok()?,
            4 => m.format = fixed::<1>(v).ok()?[0],
            5 => {
                let (k, val) = entry(v).ok()?;
                m.metadata.insert(k, val);
            }
            6 => {
                let mut e = Event::default();
                for (tag, v) in records(v).ok()? {
                    let v = text(v).ok()?;
                    match tag {
                        1 => e.ty = v,
                        2 => e.source = v,
                        3 => e.subject = v,
                        4 => e.data_schema = v,
                        _ => {}
                    }
                }
                m.event = Some(e);
            }
            7 => m.expiry = Some(Duration::from_millis(i64::from_le_bytes(fixed::<8>(v).ok()?).max(0) as u64)),
            _ => {}
        }
    }
    let clean = |s: &str| !s.chars().any(|c| c < ' ' || ('\u{7f}'..'\u{a0}').contains(&c));
    let t = &m.topic;
    let topic_ok = !t.is_empty() && t.len() <= 1024 && !t.contains(['+', '#']) && !t.starts_with('/') && !t.ends_with('/') && !t.contains("//") && clean(t);
    let attributes = ["specversion", "type", "source", "id", "time", "subject", "dataschema"];
    let metadata_ok = m.metadata.len() <= 32
        && m.metadata.iter().all(|(k, v)| {
            let lk = k.to_lowercase();
            !k.is_empty()
                && clean(k)
                && clean(v)
                && !k.starts_with("__")
                && lk != "cmdhost-message-id"
                && !(m.event.is_some() && attributes.contains(&lk.as_str()))
        });
    let event_ok =
        m.event.as_ref().map_or(true, |e| !e.ty.is_empty() && [&e.ty, &e.source, &e.subject, &e.data_schema].iter().all(|a| a.len() <= 512 && clean(a)));
    let payload_ok = m.format == 0 || (m.format == 1 && std::str::from_utf8(&m.payload).is_ok());
    if topic_ok && metadata_ok && event_ok && payload_ok && clean(&m.content_type) {
        Some(m)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::records;

    #[test]
    fn encodes_every_field() {
        let m = Message::text("devices/d1/events", "open")
            .with_metadata("k", "v")
            .with_event(Event::new("door.opened").with_subject("door"))
            .with_expiry(Duration::from_micros(1500));
        let b = encode_message(&m);
        let recs = records(&b).unwrap();
        assert_eq!(recs[0], (1, &b"devices/d1/events"[..]));
        assert_eq!(recs[1], (2, &b"open"[..]));
        assert_eq!(recs[2], (3, &b"text/plain"[..]));
        assert_eq!(recs[3], (4, &[1u8][..]));
        assert_eq!(recs[4], (5, &b"\x01\x00\x00\x00kv"[..]));
        assert_eq!(recs[5].0, 6);
        assert_eq!(records(recs[5].1).unwrap(), vec![(1, &b"door.opened"[..]), (3, &b"door"[..])]);
        assert_eq!(recs[6], (7, &2i64.to_le_bytes()[..]), "1.5 ms rounded up");
        assert_eq!(recs.len(), 7);
        assert_eq!(records(&encode_message(&Message::new("t", Vec::new()))).unwrap(), vec![(1, &b"t"[..])], "a bare message is its topic");
    }

    #[test]
    fn stand_in() {
        take_published();
        let m = Message::new("alarms/a1", b"hot".to_vec()).with_content_type("text/plain").with_event(Event::new("alarm").with_source("/plant"));
        assert_eq!(publish(&m), Ok(()));
        assert_eq!(publish(&Message::new("alarms/a2", Vec::new()).with_expiry(Duration::from_secs(60))), Ok(()));
        for bad in [
            Message::new("", b"x".to_vec()),
            Message::new("alarms/+", b"x".to_vec()),
            Message::new("alarms//a", b"x".to_vec()),
            Message::new("alarms/a", b"x".to_vec()).with_metadata("__ts", "1"),
            Message::new("alarms/a", b"x".to_vec()).with_metadata("cmdhost-message-id", "1"),
            Message::new("alarms/a", b"x".to_vec()).with_metadata("type", "1").with_event(Event::new("e")),
            Message::new("alarms/a", b"x".to_vec()).with_event(Event::new("")),
            Message { format: 1, ..Message::new("alarms/a", vec![0xff]) },
        ] {
            assert_eq!(publish(&bad), Err(PublishError::Invalid), "{:?}", bad);
        }
        let got = take_published();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], m);
        assert_eq!(got[1].expiry, Some(Duration::from_secs(60)));
        assert!(take_published().is_empty(), "taken once");
    }
}
