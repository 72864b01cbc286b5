//! A Lua state with a wrk script loaded: LuaJIT's standard libraries, the `wrk` table (its fields
//! from the run's plan, `wrk.lookup` and `wrk.connect`, then `wrk.lua`'s format and ready), `print`
//! sent where the run wants the script's output, and the script's chunk run. Every error a script
//! makes becomes one line naming its file and line ([`one_line`]).

use crate::addr::{self, Addr};
use crate::output::Output;
use mlua::{Function, Lua, Table, Value};

/// What every state of one run is made from.
pub(crate) struct Source {
    /// The file as the user named it (error lines start with it).
    pub name: String,
    /// Its file name, which Lua's messages and our own name with the line (LuaJIT shortens a
    /// long chunk name).
    pub chunk: String,
    pub code: String,
    pub scheme: String,
    pub host: String,
    pub port: u16,
    pub method: String,
    pub path: String,
    /// The Host value requests carry, and the user's other headers.
    pub authority: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub output: Output,
}

/// A fresh state with the script run in it (its globals defined, nothing called yet).
pub(crate) fn open(src: &Source) -> anyhow::Result<Lua> {
    let lua = Lua::new();
    prepare(&lua, src).map_err(|e| error(&src.name, &e))?;
    lua.load(&src.code)
        .set_name(format!("={}", src.chunk))
        .exec()
        .map_err(|e| error(&src.name, &e))?;
    Ok(lua)
}

fn prepare(lua: &Lua, src: &Source) -> mlua::Result<()> {
    let wrk = lua.create_table()?;
    wrk.set("scheme", src.scheme.as_str())?;
    wrk.set("host", src.host.as_str())?;
    wrk.set("port", src.port)?;
    wrk.set("method", src.method.as_str())?;
    wrk.set("path", src.path.as_str())?;
    let headers = lua.create_table()?;
    for (n, v) in &src.headers {
        headers.set(n.as_str(), v.as_str())?;
    }
    if !src
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("host"))
    {
        headers.set("Host", src.authority.as_str())?;
    }
    wrk.set("headers", headers)?;
    if let Some(body) = &src.body {
        wrk.set("body", lua.create_string(body)?)?;
    }
    wrk.set("lookup", lua.create_function(lookup)?)?;
    wrk.set(
        "connect",
        lua.create_function(|_, a: mlua::UserDataRef<Addr>| Ok(addr::connects(a.0)))?,
    )?;
    lua.globals().set("wrk", wrk)?;
    let out = src.output.clone();
    let print = lua.create_function(move |lua, args: mlua::Variadic<Value>| {
        let tostring: Function = lua.globals().get("tostring")?;
        let mut line = String::new();
        for (i, v) in args.into_iter().enumerate() {
            if i > 0 {
                line.push('\t');
            }
            line.push_str(&tostring.call::<mlua::String>(v)?.to_string_lossy());
        }
        out.line(&line);
        Ok(())
    })?;
    lua.globals().set("print", print)?;
    lua.load(include_str!("wrk.lua"))
        .set_name("=wrk.lua")
        .exec()
}

/// `wrk.lookup(host, service)`: the addresses `host` resolves to for `service` (a port number or
/// a name such as "http"), as addresses `wrk.connect` and `thread.addr` take.
fn lookup(lua: &Lua, (host, service): (String, Value)) -> mlua::Result<Table> {
    let port = match &service {
        Value::Integer(p) => u16::try_from(*p).ok(),
        Value::Number(p) => Some(*p as u16),
        Value::String(s) => addr::service_port(&s.to_string_lossy()),
        Value::Nil => Some(80),
        _ => None,
    };
    let Some(port) = port else {
        return Err(mlua::Error::runtime("wrk.lookup: unknown service"));
    };
    let found = addr::resolve(&host, port)
        .map_err(|e| mlua::Error::runtime(format!("wrk.lookup: {host}: {e}")))?;
    lua.create_sequence_from(found.into_iter().map(Addr))
}

/// A global function of the script, if it defines one.
pub(crate) fn function(lua: &Lua, name: &str) -> Option<Function> {
    lua.globals().get::<Option<Function>>(name).ok().flatten()
}

/// The `wrk` table of a state.
pub(crate) fn wrk(lua: &Lua) -> mlua::Result<Table> {
    lua.globals().get("wrk")
}

/// Where a function was defined: `FILE:LINE` (for errors about what it returned).
pub(crate) fn place(f: &Function) -> String {
    let info = f.info();
    let file = info.source.unwrap_or_default();
    let file = file.trim_start_matches(['=', '@']);
    match info.line_defined {
        Some(line) => format!("{file}:{line}"),
        None => file.to_string(),
    }
}

/// A Lua error as one line: the script's own message (which names its file and line), without
/// the traceback and mlua's wrapping.
pub(crate) fn one_line(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => one_line(cause),
        mlua::Error::RuntimeError(m) => first_line(m),
        mlua::Error::SyntaxError { message, .. } => first_line(message),
        mlua::Error::MemoryError(m) => format!("out of memory: {}", first_line(m)),
        mlua::Error::WithContext { cause, .. } => one_line(cause),
        other => first_line(&other.to_string()),
    }
}

fn first_line(m: &str) -> String {
    m.lines().next().unwrap_or("").to_string()
}

/// A script error for the user: one line, naming the script.
pub(crate) fn error(name: &str, e: &mlua::Error) -> anyhow::Error {
    anyhow::anyhow!("script {name}: {}", one_line(e))
}
