//! `response(status, headers, body)` called as wrk calls it: the three arguments pushed onto the
//! Lua stack straight from the received bytes in one protected call — the headers table made at
//! its final size, each name and value a Lua string made once from the head, the body one string
//! — and the function called there with `lua_pcall`. Built through mlua's per-value API (a
//! `Table::set` and a `create_string` per field, each taking the state's lock and a protected
//! call of its own, after a second parse of the head) the same call cost about three times the
//! instructions.

use mlua::{ffi, Function, Lua, Value};
use std::os::raw::c_int;

/// Calls `f(status, headers, body)` in `lua`: `head` is the response's header block as received
/// (status line, fields, blank line), `body` its decoded body. A Lua error is returned as mlua's.
pub(crate) fn call(
    lua: &Lua,
    f: &Function,
    status: u16,
    head: &[u8],
    body: &[u8],
) -> mlua::Result<()> {
    // At most one field per line after the status line: the table's size, counted once.
    let lines = memchr::memchr_iter(b'\n', head).count();
    let size = c_int::try_from(lines.saturating_sub(2)).unwrap_or(c_int::MAX);
    // SAFETY: the closure runs on `lua`'s stack inside mlua's protected call, with `f` pushed as
    // its one argument; it pushes at most four values more (Lua gives a C call 20 slots), and
    // the call's own errors are caught by `lua_pcall`, never thrown through it.
    let (ok, err): (bool, Value) = unsafe {
        lua.exec_raw(f, |state| {
            ffi::lua_pushinteger(state, ffi::lua_Integer::from(status));
            ffi::lua_createtable(state, 0, size);
            for (name, value) in fields(head) {
                push_bytes(state, name);
                push_bytes(state, value);
                ffi::lua_rawset(state, -3);
            }
            push_bytes(state, body);
            if ffi::lua_pcall(state, 3, 0, 0) == ffi::LUA_OK {
                ffi::lua_pushboolean(state, 1);
            } else {
                // The error object is on top: the flag goes below it.
                ffi::lua_pushboolean(state, 0);
                ffi::lua_insert(state, -2);
            }
        })?
    };
    match (ok, err) {
        (true, _) => Ok(()),
        (false, Value::Error(e)) => Err(*e),
        (false, Value::String(m)) => Err(mlua::Error::runtime(m.to_string_lossy())),
        (false, other) => Err(mlua::Error::runtime(format!(
            "response() raised a {} as its error",
            other.type_name()
        ))),
    }
}

/// # Safety
/// `state` is a Lua state with a free stack slot.
unsafe fn push_bytes(state: *mut ffi::lua_State, bytes: &[u8]) {
    // LuaJIT's own function: mlua's `lua_pushlstring` also reads the string back (Lua 5.4's
    // signature), two calls more per string.
    ffi::lua_pushlstring_(state, bytes.as_ptr().cast(), bytes.len());
}

/// A header block's fields as (name, value), the value without surrounding white space; the
/// status line and the blank line are skipped. The engine's parser read the block already, so
/// each field line is `name: value`. A repeated name comes once per line (the table keeps the
/// last, as wrk's).
fn fields(head: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', head)
        .map(move |end| {
            let line = &head[start..end];
            start = end + 1;
            line
        })
        .skip(1)
        .filter_map(|line| {
            // Names are short: a plain search beats memchr's set-up.
            let colon = line.iter().position(|&b| b == b':')?;
            Some((&line[..colon], line[colon + 1..].trim_ascii()))
        })
}

#[cfg(test)]
mod tests {
    use super::fields;

    #[test]
    fn fields_are_split_at_the_first_colon_and_trimmed() {
        let head = b"HTTP/1.1 200 OK\r\nServer: x\r\nDate:Sun, 29 Nov 2026 10:00:00 GMT \r\n\
                     Empty:\r\nX-A: 1\r\nX-A: 2\r\n\r\n";
        let got: Vec<(&[u8], &[u8])> = fields(head).collect();
        let want: Vec<(&[u8], &[u8])> = vec![
            (b"Server", b"x"),
            (b"Date", b"Sun, 29 Nov 2026 10:00:00 GMT"),
            (b"Empty", b""),
            (b"X-A", b"1"),
            (b"X-A", b"2"),
        ];
        assert_eq!(got, want);
        assert_eq!(fields(b"HTTP/1.1 204 No Content\r\n\r\n").count(), 0);
    }
}
