//! The envelope encoding (ABI section 7): records of tag u8, len u32 LE,
//! value.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::{Error, Request, Response};

pub(crate) struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Writer {
        Writer { buf: Vec::new() }
    }
    pub fn bytes(&mut self, tag: u8, v: &[u8]) {
        self.buf.push(tag);
        self.buf.extend_from_slice(&(v.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(v);
    }
    pub fn string(&mut self, tag: u8, s: &str) {
        self.bytes(tag, s.as_bytes())
    }
    pub fn u8(&mut self, tag: u8, v: u8) {
        self.bytes(tag, &[v])
    }
    pub fn bool(&mut self, tag: u8, v: bool) {
        self.u8(tag, v as u8)
    }
    pub fn u32(&mut self, tag: u8, v: u32) {
        self.bytes(tag, &v.to_le_bytes())
    }
    pub fn i64(&mut self, tag: u8, v: i64) {
        self.bytes(tag, &v.to_le_bytes())
    }
    /// A duration in whole milliseconds.
    pub fn ms(&mut self, tag: u8, d: Duration) {
        self.i64(tag, d.as_millis().min(9_223_372_036_854) as i64)
    }
    /// One map entry: klen u32 LE, key, value.
    pub fn entry(&mut self, tag: u8, k: &str, v: &[u8]) {
        let mut e = Vec::with_capacity(4 + k.len() + v.len());
        e.extend_from_slice(&(k.len() as u32).to_le_bytes());
        e.extend_from_slice(k.as_bytes());
        e.extend_from_slice(v);
        self.bytes(tag, &e)
    }
    pub fn map(&mut self, tag: u8, m: &BTreeMap<String, String>) {
        for (k, v) in m {
            self.entry(tag, k, v.as_bytes());
        }
    }
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// A duration in whole milliseconds, rounded up (a TTL or an expiry under
/// one millisecond is one, not none).
pub(crate) fn ceil_millis(d: Duration) -> i64 {
    (d.as_nanos().saturating_add(999_999) / 1_000_000).min(i64::MAX as u128) as i64
}

/// The records of an envelope, in order; an error when it is malformed.
pub(crate) fn records(b: &[u8]) -> Result<Vec<(u8, &[u8])>, String> {
    let mut out = Vec::new();
    let mut p = 0usize;
    while p < b.len() {
        if b.len() - p < 5 {
            return Err("a record header is cut short".into());
        }
        let n = u32::from_le_bytes([b[p + 1], b[p + 2], b[p + 3], b[p + 4]]) as usize;
        if n > b.len() - p - 5 {
            return Err(format!("record {} runs past the end", b[p]));
        }
        out.push((b[p], &b[p + 5..p + 5 + n]));
        p += 5 + n;
    }
    Ok(out)
}

pub(crate) fn text(v: &[u8]) -> Result<String, String> {
    String::from_utf8(v.to_vec()).map_err(|_| "a string that is not UTF-8".to_string())
}

pub(crate) fn fixed<const N: usize>(v: &[u8]) -> Result<[u8; N], String> {
    v.try_into().map_err(|_| format!("a value of {} bytes where {} belong", v.len(), N))
}

/// A map entry's key and value.
pub(crate) fn entry(v: &[u8]) -> Result<(String, String), String> {
    if v.len() < 4 {
        return Err("a map entry is cut short".into());
    }
    let k = u32::from_le_bytes(fixed::<4>(&v[..4])?) as usize;
    if k > v.len() - 4 {
        return Err("a map entry's key runs past it".into());
    }
    Ok((text(&v[4..4 + k])?, text(&v[4 + k..])?))
}

pub(crate) fn decode_request(b: &[u8]) -> Result<Request, String> {
    let mut r = Request { attempt: 1, ..Default::default() };
    for (tag, v) in records(b)? {
        match tag {
            1 => r.command = text(v)?,
            2 => r.payload = v.to_vec(),
            3 => r.content_type = text(v)?,
            4 => r.format = fixed::<1>(v)?[0],
            5 => {
                let (k, val) = entry(v)?;
                r.metadata.insert(k, val);
            }
            6 => {
                let (k, val) = entry(v)?;
                r.topic_tokens.insert(k, val);
            }
            7 => r.invoker_id = text(v)?,
            8 => r.correlation_id = v.to_vec(),
            9 => r.deadline_unix_nanos = Some(i64::from_le_bytes(fixed::<8>(v)?)),
            10 => r.executor_id = text(v)?,
            11 => r.attempt = u32::from_le_bytes(fixed::<4>(v)?),
            12 => r.caller.user = text(v)?,
            13 => r.caller.client_id = text(v)?,
            14 => r.topic = text(v)?,
            _ => {} // a later minor version's: skipped
        }
    }
    Ok(r)
}

pub(crate) fn encode_response(result: &Result<Response, Error>) -> Vec<u8> {
    let mut w = Writer::new();
    match result {
        Ok(r) => {
            if r.no_content {
                w.u32(1, 204);
            } else if !r.payload.is_empty() {
                w.bytes(6, &r.payload);
            }
            if !r.content_type.is_empty() {
                w.string(7, &r.content_type);
            }
            if r.format != 0 && !r.no_content {
                w.u8(8, r.format);
            }
            w.map(9, &r.metadata);
            if let Some(ttl) = r.ttl {
                w.ms(10, ttl);
            }
        }
        Err(Error::App(msg)) => {
            w.bool(2, true);
            w.string(3, msg);
        }
        Err(Error::Status { status, message, prop_name, prop_value }) => {
            w.u32(1, *status);
            w.string(3, message);
            if !prop_name.is_empty() {
                w.string(4, prop_name);
                w.string(5, prop_value);
            }
        }
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn request_bytes() -> Vec<u8> {
        let mut w = Writer::new();
        w.string(1, "echo");
        w.bytes(2, b"hi\x00");
        w.string(3, "text/plain");
        w.u8(4, 1);
        w.entry(5, "k", b"v");
        w.entry(6, "id", b"7");
        w.string(7, "inv");
        w.bytes(8, &[1, 2, 3]);
        w.i64(9, 1_700_000_000_000_000_000);
        w.string(10, "host");
        w.u32(11, 2);
        w.string(12, "alice");
        w.string(13, "alice-1");
        w.string(14, "sensors/d1/temp");
        w.bytes(99, b"a later version's record");
        w.finish()
    }

    #[test]
    fn decodes_every_request_field_and_skips_unknown_tags() {
        let r = decode_request(&request_bytes()).expect("decodes");
        assert_eq!(r.command, "echo");
        assert_eq!(r.payload, b"hi\x00");
        assert_eq!(r.content_type, "text/plain");
        assert_eq!(r.format, 1);
        assert_eq!(r.metadata.get("k").map(String::as_str), Some("v"));
        assert_eq!(r.topic_tokens.get("id").map(String::as_str), Some("7"));
        assert_eq!(r.invoker_id, "inv");
        assert_eq!(r.correlation_id, vec![1, 2, 3]);
        assert_eq!(r.deadline_unix_nanos, Some(1_700_000_000_000_000_000));
        assert_eq!(r.executor_id, "host");
        assert_eq!(r.attempt, 2);
        assert_eq!(r.caller, crate::Caller { user: "alice".into(), client_id: "alice-1".into() });
        assert!(r.caller.verified());
        assert_eq!(r.topic, "sensors/d1/temp");
    }

    #[test]
    fn attempt_defaults_to_one() {
        let mut w = Writer::new();
        w.string(1, "echo");
        assert_eq!(decode_request(&w.finish()).expect("decodes").attempt, 1);
    }

    #[test]
    fn refuses_malformed_requests() {
        let whole = request_bytes();
        assert!(decode_request(&whole[..whole.len() - 1]).is_err(), "a record cut short");
        assert!(decode_request(&whole[..3]).is_err(), "a header cut short");
        let mut w = Writer::new();
        w.bytes(4, &[1, 2]);
        assert!(decode_request(&w.finish()).is_err(), "a u8 of two bytes");
        let mut w = Writer::new();
        w.bytes(1, &[0xff]);
        assert!(decode_request(&w.finish()).is_err(), "a command that is not UTF-8");
    }

    #[test]
    fn encodes_replies_and_errors() {
        let ok = Response::new(b"hi".to_vec()).with_content_type("text/plain").with_metadata("k", "v").with_ttl(Duration::from_millis(1500));
        let recs: Vec<(u8, Vec<u8>)> = records(&encode_response(&Ok(ok))).unwrap().into_iter().map(|(t, v)| (t, v.to_vec())).collect();
        assert_eq!(recs[0], (6, b"hi".to_vec()));
        assert_eq!(recs[1], (7, b"text/plain".to_vec()));
        assert_eq!(recs[2].0, 9);
        assert_eq!(recs[3], (10, 1500i64.to_le_bytes().to_vec()));

        assert!(encode_response(&Ok(Response::new(Vec::new()))).is_empty(), "an empty 200 is no records");
        let nc = encode_response(&Ok(Response::no_content()));
        assert_eq!(records(&nc).unwrap(), vec![(1, &204u32.to_le_bytes()[..])]);

        let app = encode_response(&Err(Error::app("down")));
        assert_eq!(records(&app).unwrap(), vec![(2, &[1u8][..]), (3, &b"down"[..])]);
        let bad = encode_response(&Err(Error::unsupported_content_type("x/y")));
        let recs = records(&bad).unwrap();
        assert_eq!(recs[0], (1, &415u32.to_le_bytes()[..]));
        assert_eq!(recs[2], (4, &b"Content Type"[..]));
        assert_eq!(recs[3], (5, &b"x/y"[..]));
    }

    #[test]
    fn durations_are_whole_milliseconds_within_range() {
        let mut w = Writer::new();
        w.ms(3, Duration::from_secs(u64::MAX));
        let b = w.finish();
        assert_eq!(i64::from_le_bytes(b[5..13].try_into().unwrap()), 9_223_372_036_854);
    }
}
