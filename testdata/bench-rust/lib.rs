//! bench-rust: compute kernels for make bench-compute (internal/wasm
//! compute_bench_test.go), each a command and a plain export k_NAME(n)
//! returning a checksum, so that the host's engine and bare wazero run the
//! same compiled code.

use cmdhost::{Command, Error, Request, Response};
use std::time::Duration;

fn fib(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// A JSON document of about n bytes: an array of records, built by the guest.
fn document(n: usize) -> Vec<u8> {
    let mut s = String::with_capacity(n + 128);
    s.push('[');
    let mut i = 0u64;
    while s.len() < n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            "{{\"id\":{},\"name\":\"user-{}\",\"score\":{}.{},\"tags\":[\"a\",\"b\\\"c\"],\"ok\":{},\"ref\":null}}",
            i,
            i * 7919,
            i % 100,
            i % 7,
            i % 2 == 0
        ));
        i += 1;
    }
    s.push(']');
    s.into_bytes()
}

#[derive(Debug, PartialEq)]
enum Token<'a> {
    Open(u8),
    Close(u8),
    Colon,
    Comma,
    Str(&'a [u8]),
    Num(f64),
    Bool(bool),
    Null,
}

/// A JSON tokenizer: the realistic handler's core (strings with escapes,
/// numbers parsed to f64, literals), returning a token or an error.
struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Lexer<'a> {
    fn next(&mut self) -> Result<Option<Token<'a>>, String> {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\n' | b'\t' | b'\r') {
            self.i += 1;
        }
        if self.i >= self.b.len() {
            return Ok(None);
        }
        let c = self.b[self.i];
        self.i += 1;
        Ok(Some(match c {
            b'[' | b'{' => Token::Open(c),
            b']' | b'}' => Token::Close(c),
            b':' => Token::Colon,
            b',' => Token::Comma,
            b'"' => {
                let start = self.i;
                while self.i < self.b.len() && self.b[self.i] != b'"' {
                    if self.b[self.i] == b'\\' {
                        self.i += 1;
                    }
                    self.i += 1;
                }
                let s = &self.b[start..self.i.min(self.b.len())];
                self.i += 1;
                Token::Str(s)
            }
            b't' | b'f' | b'n' => {
                let word: &[u8] = match c {
                    b't' => b"rue",
                    b'f' => b"alse",
                    _ => b"ull",
                };
                if !self.b[self.i..].starts_with(word) {
                    return Err(format!("bad literal at {}", self.i));
                }
                self.i += word.len();
                match c {
                    b't' => Token::Bool(true),
                    b'f' => Token::Bool(false),
                    _ => Token::Null,
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = self.i - 1;
                while self.i < self.b.len() && matches!(self.b[self.i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    self.i += 1;
                }
                let s = std::str::from_utf8(&self.b[start..self.i]).map_err(|e| e.to_string())?;
                Token::Num(s.parse::<f64>().map_err(|e| e.to_string())?)
            }
            _ => return Err(format!("unexpected byte {} at {}", c, self.i - 1)),
        }))
    }
}

fn json(n: u32) -> u64 {
    let doc = document(n as usize);
    let mut lx = Lexer { b: &doc, i: 0 };
    let mut sum = 0u64;
    let mut tokens = 0u64;
    loop {
        match lx.next() {
            Ok(Some(t)) => {
                tokens += 1;
                sum = sum.wrapping_mul(31).wrapping_add(match t {
                    Token::Str(s) => s.len() as u64,
                    Token::Num(f) => f as u64,
                    Token::Bool(b) => b as u64,
                    _ => 1,
                });
            }
            Ok(None) => break,
            Err(_) => return 0,
        }
    }
    sum ^ tokens
}

#[no_mangle]
pub extern "C" fn k_fib(n: u32) -> u64 {
    fib(n)
}

#[no_mangle]
pub extern "C" fn k_json(n: u32) -> u64 {
    json(n)
}

fn arg(req: &Request) -> Result<u32, Error> {
    std::str::from_utf8(&req.payload).ok().and_then(|s| s.parse().ok()).ok_or_else(|| Error::invalid_payload("bench: n as decimal text"))
}

fn cmd_fib(req: &Request) -> Result<Response, Error> {
    Ok(Response::text(&k_fib(arg(req)?).to_string()))
}

fn cmd_json(req: &Request) -> Result<Response, Error> {
    Ok(Response::text(&k_json(arg(req)?).to_string()))
}

fn commands() -> Vec<Command> {
    vec![
        Command::new("rfib", cmd_fib).timeout(Duration::from_secs(60)),
        Command::new("json", cmd_json).timeout(Duration::from_secs(60)),
    ]
}

cmdhost::plugin!(commands);
