//! One load thread's Lua state and its `thread` object: what `setup(thread)` gets in the run's
//! main state and `wrk.thread` is in the thread's own (`addr`, `get`, `set`, `stop`), and the
//! engine's [`ThreadScript`] over it: `request()`, `response()` and `delay()` called only when the
//! script defines them, each call counted for the watchdog.

use crate::addr::Addr;
use crate::response;
use crate::state::{self, place};
use crate::watchdog::Watch;
use mlua::{Function, Lua, UserData, UserDataFields, UserDataMethods, Value, WeakLua};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use webstand_results::script::{Calls, ThreadScript};

/// How deep `thread:get`/`thread:set` copy nested tables.
const COPY_DEPTH: usize = 32;

/// wrk's `thread`: a handle on a load thread's state, shared by its `setup` and its own state.
#[derive(Clone)]
pub(crate) struct Handle {
    lua: WeakLua,
    pub stop: Arc<AtomicBool>,
    pub addr: Arc<Mutex<SocketAddr>>,
}

impl Handle {
    pub(crate) fn new(lua: &Lua, addr: SocketAddr) -> Handle {
        Handle {
            lua: lua.weak(),
            stop: Arc::default(),
            addr: Arc::new(Mutex::new(addr)),
        }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        *self.addr.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl UserData for Handle {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("addr", |_, h| Ok(Addr(h.addr())));
        f.add_field_method_set("addr", |_, h, a: mlua::UserDataRef<Addr>| {
            *h.addr.lock().unwrap_or_else(|p| p.into_inner()) = a.0;
            Ok(())
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("get", |lua, h, name: String| {
            let theirs = h.lua.try_upgrade().ok_or_else(gone)?;
            let v: Value = theirs.globals().get(name)?;
            copy(&v, lua, COPY_DEPTH)
        });
        m.add_method("set", |lua, h, (name, v): (String, Value)| {
            let _ = lua;
            let theirs = h.lua.try_upgrade().ok_or_else(gone)?;
            let v = copy(&v, &theirs, COPY_DEPTH)?;
            theirs.globals().set(name, v)
        });
        m.add_method("stop", |_, h, ()| {
            h.stop.store(true, Ordering::Relaxed);
            Ok(())
        });
    }
}

fn gone() -> mlua::Error {
    mlua::Error::runtime("the thread's state is gone")
}

/// `v` made again in `to` (nil, booleans, numbers, strings and tables of them, as wrk copies).
fn copy(v: &Value, to: &Lua, depth: usize) -> mlua::Result<Value> {
    Ok(match v {
        Value::Nil | Value::Boolean(_) | Value::Integer(_) | Value::Number(_) => v.clone(),
        Value::String(s) => Value::String(to.create_string(s.as_bytes())?),
        Value::Table(t) if depth > 0 => {
            let out = to.create_table()?;
            for pair in t.pairs::<Value, Value>() {
                let (k, v) = pair?;
                out.set(copy(&k, to, depth - 1)?, copy(&v, to, depth - 1)?)?;
            }
            Value::Table(out)
        }
        Value::Table(_) => return Err(mlua::Error::runtime("table nested too deep to copy")),
        other => {
            let what = other.type_name();
            return Err(mlua::Error::runtime(format!(
                "a {what} cannot be copied between threads"
            )));
        }
    })
}

/// A load thread's script: its state, the callbacks it defines, its fixed request.
pub(crate) struct LuaThread {
    pub lua: Lua,
    name: String,
    request: Option<Function>,
    response: Option<Function>,
    delay: Option<Function>,
    fixed: Vec<u8>,
    per_call: usize,
    pub handle: Handle,
    watch: Watch,
}

impl LuaThread {
    /// The thread's state after `setup` ran: `init(args)` called, the request built once, the
    /// callbacks looked up, and (for the run's first thread) the requests one call holds counted.
    pub(crate) fn ready(
        lua: Lua,
        name: &str,
        handle: Handle,
        args: &[String],
        watch: Watch,
    ) -> anyhow::Result<LuaThread> {
        let err = |e: mlua::Error| state::error(name, &e);
        let wrk = state::wrk(&lua).map_err(err)?;
        wrk.set("thread", handle.clone()).map_err(err)?;
        if let Some(init) = state::function(&lua, "init") {
            let args = lua
                .create_sequence_from(args.iter().map(String::as_str))
                .map_err(err)?;
            watch.around(|| init.call::<()>(args)).map_err(err)?;
        }
        let ready: Function = wrk.get("ready").map_err(err)?;
        let fixed: mlua::String = ready.call(()).map_err(err)?;
        let fixed = fixed.as_bytes().to_vec();
        let mut t = LuaThread {
            request: state::function(&lua, "request"),
            response: state::function(&lua, "response"),
            delay: state::function(&lua, "delay"),
            lua,
            name: name.to_string(),
            fixed,
            per_call: 1,
            handle,
            watch,
        };
        t.per_call = match t.request.is_some() {
            // As wrk: one call made before the run tells how many requests each call returns.
            true => {
                let mut first = Vec::new();
                t.request(&mut first)?;
                count_requests(&first)
            }
            false => count_requests(&t.fixed),
        }
        .map_err(|e| {
            // Where the script's request() is, when it has one (else wrk.format's fields made it).
            let at = t.request.as_ref().map(|f| format!("{}: ", place(f)));
            anyhow::anyhow!(
                "script {}: {}request(): {e}",
                t.name,
                at.unwrap_or_default()
            )
        })?;
        Ok(t)
    }

    fn error(&self, e: &mlua::Error) -> anyhow::Error {
        state::error(&self.name, e)
    }
}

impl ThreadScript for LuaThread {
    fn calls(&self) -> Calls {
        Calls {
            request: self.request.is_some(),
            response: self.response.is_some(),
            delay: self.delay.is_some(),
        }
    }

    fn addr(&self) -> SocketAddr {
        self.handle.addr()
    }

    fn requests_per_call(&self) -> usize {
        self.per_call
    }

    fn fixed_request(&self) -> &[u8] {
        &self.fixed
    }

    fn request(&mut self, out: &mut Vec<u8>) -> anyhow::Result<()> {
        let f = self.request.as_ref().expect("called only when defined");
        match self.watch.around(|| f.call::<Value>(())) {
            Ok(Value::String(s)) => {
                out.extend_from_slice(&s.as_bytes());
                Ok(())
            }
            Ok(other) => Err(anyhow::anyhow!(
                "script {}: {}: request() returned {}, not the request as a string",
                self.name,
                place(f),
                lua_type(&other)
            )),
            Err(e) => Err(self.error(&e)),
        }
    }

    fn response(&mut self, status: u16, head: &[u8], body: &[u8]) -> anyhow::Result<()> {
        let f = self.response.as_ref().expect("called only when defined");
        self.watch
            .around(|| response::call(&self.lua, f, status, head, body))
            .map_err(|e| self.error(&e))
    }

    fn delay(&mut self) -> anyhow::Result<Duration> {
        let f = self.delay.as_ref().expect("called only when defined");
        let ms = match self.watch.around(|| f.call::<Value>(())) {
            Ok(Value::Integer(ms)) => ms as f64,
            Ok(Value::Number(ms)) => ms,
            Ok(other) => {
                return Err(anyhow::anyhow!(
                    "script {}: {}: delay() returned {}, not a number of milliseconds",
                    self.name,
                    place(f),
                    lua_type(&other)
                ))
            }
            Err(e) => return Err(self.error(&e)),
        };
        Ok(Duration::from_secs_f64(ms.max(0.0) / 1000.0))
    }

    fn stopped(&self) -> bool {
        self.handle.stop.load(Ordering::Relaxed)
    }
}

/// A value's type as Lua's `type()` names it (an integer is a number).
fn lua_type(v: &Value) -> &'static str {
    match v {
        Value::Integer(_) => "a number",
        Value::Nil => "nil",
        other => other.type_name(),
    }
}

/// How many HTTP/1 requests `bytes` holds, one after another (wrk pipelines what one call
/// returns).
fn count_requests(mut bytes: &[u8]) -> Result<usize, String> {
    let mut n = 0;
    while !bytes.is_empty() {
        let mut fields = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut fields);
        let head = match req.parse(bytes) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Err("an incomplete request".into()),
            Err(e) => return Err(format!("not an HTTP/1 request ({e})")),
        };
        let body = req
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-length"))
            .and_then(|h| {
                std::str::from_utf8(h.value)
                    .ok()?
                    .trim()
                    .parse::<usize>()
                    .ok()
            })
            .unwrap_or(0);
        let len = (head + body).min(bytes.len());
        bytes = &bytes[len..];
        n += 1;
    }
    Ok(n.max(1))
}

#[cfg(test)]
mod tests {
    use super::count_requests;

    #[test]
    fn requests_in_one_call_are_counted() {
        let one = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
        let post = b"POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc";
        assert_eq!(count_requests(one), Ok(1));
        assert_eq!(count_requests(&[&one[..], post, one].concat()), Ok(3));
        assert!(count_requests(b"GET /a HTTP/1.1\r\n").is_err());
        assert!(count_requests(b"\x01\x02").is_err());
    }
}
