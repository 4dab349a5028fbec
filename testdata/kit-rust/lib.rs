//! kit-rust: the guest kit's test plugin in Rust (testdata/kit/README.md
//! says what each command does; internal/nested/guestkit_test.go checks it).

use cmdhost::{
    add_var, call_command, config, fan_out, get_var, http, info, publish, set_var, shared_state, state, Call, Command, Error, Event, HttpRequest, Message,
    PublishError, Request, Response, SetOptions, StateError, StateSpace, Sync,
};
use std::time::Duration;

fn echo(req: &Request) -> Result<Response, Error> {
    let mut r = Response::new(req.payload.clone()).with_content_type(&req.content_type);
    r.metadata = req.metadata.clone();
    Ok(r)
}

fn caller(req: &Request) -> Result<Response, Error> {
    Ok(Response::text(&format!("user={};client={}", req.caller.user, req.caller.client_id)))
}

fn fail(_: &Request) -> Result<Response, Error> {
    Err(Error::app("kit: deliberate failure"))
}

fn status(req: &Request) -> Result<Response, Error> {
    match req.payload.as_slice() {
        b"400" => Err(Error::invalid_payload("kit: bad payload")),
        b"415" => Err(Error::unsupported_content_type(&req.content_type)),
        _ => Ok(Response::no_content()),
    }
}

fn idem(req: &Request) -> Result<Response, Error> {
    Ok(Response::new(req.payload.clone()))
}

fn cfg(req: &Request) -> Result<Response, Error> {
    let key = String::from_utf8_lossy(&req.payload).into_owned();
    match config(&key) {
        Some(v) => Ok(Response::text(&v)),
        None => Err(Error::app(format!("kit: no config {}", key))),
    }
}

fn var(req: &Request) -> Result<Response, Error> {
    if req.payload == b"add" {
        let n = add_var("n", 1)?;
        return Ok(Response::text(&n.to_string()));
    }
    set_var("v", &req.payload)?;
    match get_var("v")? {
        Some(v) => Ok(Response::new(v)),
        None => Err(Error::app("kit: the variable just set is not there")),
    }
}

fn log(req: &Request) -> Result<Response, Error> {
    info(&String::from_utf8_lossy(&req.payload));
    Ok(Response::new(Vec::new()))
}

fn nest(req: &Request) -> Result<Response, Error> {
    let r = call_command(Call::new("kit-echo", req.payload.clone())).map_err(|e| Error::app(e.to_string()))?;
    if r.status != 200 {
        return Err(Error::app(format!("kit: kit-echo answered {}: {}", r.status, r.message)));
    }
    Ok(Response::new(r.payload))
}

fn fan(req: &Request) -> Result<Response, Error> {
    let branch = |name: &str| (name.to_string(), Call::new("kit-echo", [req.payload.as_slice(), b"-", name.as_bytes()].concat()));
    let r = fan_out(Sync::default(), vec![branch("a"), branch("b")]).map_err(|e| Error::app(e.to_string()))?;
    let text = |i: usize| String::from_utf8_lossy(&r[i].payload).into_owned();
    Ok(Response::text(&format!("{}={};{}={}", r[0].name, text(0), r[1].name, text(1))))
}

fn trap(_: &Request) -> Result<Response, Error> {
    panic!("kit: deliberate trap")
}

fn deadline(req: &Request) -> Result<Response, Error> {
    if req.payload == b"remaining" {
        return match req.remaining() {
            Some(d) if d > Duration::ZERO && d <= Duration::from_secs(10) => Ok(Response::text("ok")),
            other => Err(Error::app(format!("kit: remaining {:?}", other))),
        };
    }
    // Spin until the host cuts the call: a volatile write the optimizer
    // keeps.
    let mut n: u64 = 0;
    loop {
        unsafe { std::ptr::write_volatile(&mut n, n.wrapping_add(1)) };
    }
}

/// Runs one state store operation named by the payload
/// (testdata/kit/README.md, kit-state) and replies with what it found.
fn kit_state(req: &Request) -> Result<Response, Error> {
    let payload = String::from_utf8_lossy(&req.payload).into_owned();
    let f: Vec<&str> = payload.splitn(3, ' ').collect();
    let arg = |i: usize| f.get(i).copied().unwrap_or("");
    let (own, shared) = (state(), shared_state("kit"));
    let got = |(v, version): (Vec<u8>, u64)| format!("{}@{}", String::from_utf8_lossy(&v), version);
    let ok = |r: Result<(), StateError>| r.map(|_| "ok".to_string());
    let bit = |existed: bool| if existed { "1" } else { "0" }.to_string();
    let number = |s: &str| s.parse::<u64>().map_err(|e| Error::app(format!("kit: {} wants a number: {}", arg(0), e)));
    let result = match arg(0) {
        "get" => own.get(arg(1)).map(got),
        "shared-get" => shared.get(arg(1)).map(|(v, _)| String::from_utf8_lossy(&v).into_owned()),
        "set" => ok(own.set(arg(1), arg(2))),
        "setget" => own.set(arg(1), arg(2)).and_then(|_| own.get(arg(1))).map(got),
        "shared-set" => ok(shared.set(arg(1), arg(2))),
        "absent" => ok(own.set_with(arg(1), arg(2), SetOptions::new().if_absent())),
        "cas" | "ttl" | "delv" => {
            let (n, v) = arg(2).split_once(' ').unwrap_or((arg(2), ""));
            let n = number(n)?;
            match arg(0) {
                "cas" => ok(own.set_with(arg(1), v, SetOptions::new().if_version(n))),
                "ttl" => ok(own.set_with(arg(1), v, SetOptions::new().ttl(Duration::from_millis(n)))),
                _ => own.delete_if_version(arg(1), n).map(bit),
            }
        }
        "add" => own.add(arg(1), 1).map(|n| n.to_string()),
        "del" => own.delete(arg(1)).map(bit),
        "list" => list_all(&own, arg(1)),
        "big" => {
            let n = number(arg(2))? as usize;
            ok(own.set(arg(1), vec![b'x'; n]))
        }
        "fail" => {
            own.set(arg(1), "failed")?;
            return Err(Error::app("kit: deliberate failure after a write"));
        }
        op => return Err(Error::app(format!("kit: unknown state operation {:?}", op))),
    };
    let word = match result {
        Ok(s) => return Ok(Response::text(&s)),
        Err(StateError::Conflict) => "conflict",
        Err(StateError::NotFound) => "missing",
        Err(StateError::Denied) => "denied",
        Err(StateError::TooLarge) => "too-large",
        Err(StateError::Quota) => "quota",
        Err(StateError::NotInteger) => "not-integer",
        Err(e) => return Err(e.into()),
    };
    Ok(Response::text(word))
}

/// Every key that starts with prefix, page after page, joined by ",".
fn list_all(space: &StateSpace, prefix: &str) -> Result<String, StateError> {
    let mut all = Vec::new();
    let mut after = Vec::new();
    loop {
        let page = space.list(prefix, &after)?;
        all.extend(page.keys.iter().map(|k| String::from_utf8_lossy(k).into_owned()));
        match page.keys.last() {
            Some(last) if page.more => after = last.clone(),
            _ => return Ok(all.join(",")),
        }
    }
}

/// Publishes what the payload says (testdata/kit/README.md, kit-publish)
/// and replies ok, or the error's word.
fn kit_publish(req: &Request) -> Result<Response, Error> {
    let payload = String::from_utf8_lossy(&req.payload).into_owned();
    let f: Vec<&str> = payload.splitn(3, ' ').collect();
    let mut m = Message::new(f[0], f.get(1).copied().unwrap_or("")).with_content_type("text/plain");
    match f.get(2).copied() {
        Some("event") => m = m.with_event(Event::new("kit.event")),
        Some("reserved") => m = m.with_metadata("__ts", "x"),
        _ => {}
    }
    let word = match publish(&m) {
        Ok(()) => "ok",
        Err(PublishError::Denied) => "denied",
        Err(PublishError::TooLarge) => "too-large",
        Err(PublishError::Limit) => "limit",
        Err(PublishError::Invalid) => "invalid",
        Err(e) => return Err(e.into()),
    };
    Ok(Response::text(word))
}

/// Sends the requests the payload names (testdata/kit/README.md, kit-http)
/// and replies with their responses, or the errors' words, a line each.
fn kit_http(req: &Request) -> Result<Response, Error> {
    let payload = String::from_utf8_lossy(&req.payload).into_owned();
    let (mut payload, mut times) = (payload.as_str(), 1);
    if let Some((n, rest)) = payload.split_once(' ') {
        if let Some(k) = n.strip_prefix('x').and_then(|k| k.parse::<usize>().ok()) {
            payload = rest;
            times = k;
        }
    }
    let replies = (0..times).map(|_| kit_http_once(payload)).collect::<Result<Vec<_>, _>>()?;
    Ok(Response::new(replies.join(&b'\n')).with_content_type("text/plain"))
}

/// Sends the request of a kit-http payload: METHOD URL [BODY].
fn kit_http_once(payload: &str) -> Result<Vec<u8>, Error> {
    let f: Vec<&str> = payload.splitn(3, ' ').collect();
    if f.len() < 2 {
        return Err(Error::app(format!("kit: kit-http wants [xN] METHOD URL [BODY], not {:?}", payload)));
    }
    let mut r = HttpRequest::new(f[0], f[1]).header("X-Kit", "rust");
    if let Some(body) = f.get(2) {
        let body = match body.strip_prefix('+').and_then(|n| n.parse::<usize>().ok()) {
            Some(n) => vec![b'x'; n],
            None => body.as_bytes().to_vec(),
        };
        r = r.body(body).header("Content-Type", "text/plain");
    }
    Ok(match http(&r) {
        Ok(resp) => [format!("{} {} ", resp.status, resp.header("X-Kit-Reply").unwrap_or("")).into_bytes(), resp.body].concat(),
        Err(e) => format!("{}: {}", e.reason.as_str().replace('_', "-"), e.message).into_bytes(),
    })
}

/// Handles a message of the kit's trigger (testdata/kit/README.md,
/// kit.device.any.all): fails the attempt for the payload fail, else logs
/// the message's topic, its device token and its payload.
fn kit_trigger(m: &Request) -> Result<(), Error> {
    let device = m.topic_tokens.get("device").map(String::as_str).unwrap_or("");
    if m.payload == b"fail" {
        return Err(Error::app(format!("kit: deliberate failure on {} (device {})", m.topic, device)));
    }
    info(&format!("kit-trigger topic={} device={} payload={}", m.topic, device, String::from_utf8_lossy(&m.payload)));
    Ok(())
}

fn commands() -> Vec<Command> {
    vec![
        Command::new("kit-caller", caller),
        Command::new("kit-echo", echo),
        Command::new("kit-error", fail),
        Command::new("kit-status", status),
        Command::new("kit-idem", idem).idempotent().response_ttl(Duration::from_secs(60)).content_types(&["text/plain"]).timeout(Duration::from_secs(2)),
        Command::new("kit-config", cfg),
        Command::new("kit-var", var),
        Command::new("kit-log", log),
        Command::new("kit-nest", nest),
        Command::new("kit-fan", fan),
        Command::new("kit-trap", trap),
        Command::new("kit-deadline", deadline).timeout(Duration::from_millis(300)),
        Command::new("kit-state", kit_state),
        Command::new("kit-publish", kit_publish),
        Command::new("kit-http", kit_http),
        Command::on_message("kit/{device}/+/#", kit_trigger), // named after its filter: kit.device.any.all
    ]
}

cmdhost::plugin!(commands);
