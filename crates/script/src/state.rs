//! A Lua state with a wrk script loaded: LuaJIT's standard libraries (their loaders taking text
//! only, `text_only.lua`), the `wrk` table (its fields from the run's plan, `wrk.lookup` and
//! `wrk.connect`, then `wrk.lua`'s format and ready), `print` sent where the run wants the script's
//! output, and the script's chunk run as text. Every error a script
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

impl Source {
    /// `code` as a run of a GET of / on localhost:8080 with no headers of the user's would load it,
    /// its output kept: what the fuzz target and the tests load scripts as.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn localhost(name: &str, chunk: &str, code: &str) -> Source {
        Source {
            name: name.into(),
            chunk: chunk.into(),
            code: code.into(),
            scheme: "http".into(),
            host: "localhost".into(),
            port: 8080,
            method: "GET".into(),
            path: "/".into(),
            authority: "localhost:8080".into(),
            headers: vec![],
            body: None,
            output: Output::kept(),
        }
    }
}

/// A fresh state with the script run in it (its globals defined, nothing called yet).
pub(crate) fn open(src: &Source) -> anyhow::Result<Lua> {
    open_with(src, |_| Ok(()))
}

/// [`open`], with `before` run on the prepared state just before the script (the fuzz target's
/// bounds).
pub(crate) fn open_with(
    src: &Source,
    before: impl FnOnce(&Lua) -> mlua::Result<()>,
) -> anyhow::Result<Lua> {
    if src.code.starts_with('\x1b') {
        anyhow::bail!(
            "script {}: {}:1: LuaJIT bytecode, not a script's text (scripts are loaded as text only)",
            src.name,
            src.chunk
        );
    }
    let lua = Lua::new();
    prepare(&lua, src)
        .and_then(|()| before(&lua))
        .map_err(|e| error(&src.name, &e))?;
    // Text only: LuaJIT runs bytecode unchecked, and a crafted chunk crashes it.
    lua.load(&src.code)
        .set_name(format!("={}", src.chunk))
        .set_mode(mlua::ChunkMode::Text)
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
        .exec()?;
    lua.load(include_str!("text_only.lua"))
        .set_name("=text_only.lua")
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

/// A script error for the user: one line, naming the script, and the line of the script it came
/// from (from the traceback when the message itself has none: `error(msg, 0)`, an error value
/// that is not a string).
pub(crate) fn error(name: &str, e: &mlua::Error) -> anyhow::Error {
    let line = one_line(e);
    let chunk = std::path::Path::new(name)
        .file_name()
        .map_or_else(|| name.to_string(), |n| n.to_string_lossy().into_owned());
    let mark = format!("{chunk}:");
    if line.contains(&mark) {
        return anyhow::anyhow!("script {name}: {line}");
    }
    let full = e.to_string();
    let place = full.match_indices(&mark).find_map(|(at, _)| {
        let digits: String = full[at + mark.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        (!digits.is_empty()).then(|| format!("{mark}{digits}: "))
    });
    anyhow::anyhow!("script {name}: {}{line}", place.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(code: &str) -> Source {
        Source::localhost("dir/x.lua", "x.lua", code)
    }

    #[test]
    fn an_error_without_a_place_is_given_the_line_it_came_from() {
        let err = open(&source("local a = 1\nerror(\"plain\", 0)\n")).unwrap_err();
        assert_eq!(err.to_string(), "script dir/x.lua: x.lua:2: plain");
        let err = open(&source("local a = 1\n\nerror(\"at\")\n")).unwrap_err();
        assert_eq!(err.to_string(), "script dir/x.lua: x.lua:3: at");
    }

    #[test]
    fn a_bytecode_script_is_refused_not_run() {
        // LuaJIT's signature is valid UTF-8: such a file reads as text and reached LuaJIT's
        // bytecode loader, which trusts what it reads.
        let err = open(&source("\x1bLJ\x02\x0a\x00")).unwrap_err().to_string();
        assert_eq!(
            err,
            "script dir/x.lua: x.lua:1: LuaJIT bytecode, not a script's text (scripts are loaded as text only)"
        );
        // Nor can a script hand bytecode to Lua's loaders.
        let script = r#"
            local dumped = string.dump(function() return 1 end)
            for _, f in ipairs({ function() return loadstring(dumped) end,
                                 function() return load(dumped, "d", "b") end,
                                 function() return load(dumped) end }) do
                local chunk, why = f()
                assert(chunk == nil and why:find("wrong mode"), tostring(why))
            end
            assert(load("return 2")() == 2 and loadstring("return 3")() == 3)
        "#;
        open(&source(script)).unwrap();
    }
}
