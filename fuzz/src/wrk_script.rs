//! A wrk Lua script as `bench -s` loads it (`wrk_script`): the fuzzed text is the script's file,
//! loaded as text only (never LuaJIT bytecode, which LuaJIT runs unchecked), run in a main state and
//! a thread's, `setup`, `init`, `request`, `response` and `delay` called as a run calls them (the
//! script crate's `fuzzing` entry, which bounds each state by an instruction budget where a run's
//! watchdog would stop it, and keeps the text off the machine's files, network and processes).
//! Whatever the text, it loads and runs, or is refused with one line that names the file and (for
//! what the script did) the line, or runs past the budget; what `request()` returns is requests.

use webstand_script::fuzzing::{run, Fared, NAME};

const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nServer: webstand\r\nContent-Length: 5\r\n\r\n";

pub fn target(data: &[u8]) {
    // A script file is read as UTF-8 text (`bench -s` refuses anything else before Lua sees it).
    let Ok(code) = std::str::from_utf8(data) else {
        return;
    };
    match run(code, (HEAD, b"hello")) {
        Fared::Ran { requests, per_call } => {
            assert!(per_call >= 1);
            assert!(!requests.is_empty());
        }
        Fared::Refused(why) => {
            let prefix = format!("script {NAME}: ");
            assert!(
                why.starts_with(&prefix),
                "a refusal not naming the script: {why}"
            );
            assert!(
                !why.contains('\n'),
                "a refusal of more than one line: {why}"
            );
            let line = format!("{NAME}:");
            let named = why[prefix.len()..].contains(&line);
            assert!(
                named || placeless(&why[prefix.len()..]),
                "a refusal without a line: {why}"
            );
        }
        Fared::Stopped => {}
    }
}

/// Refusals that name no line because none is the script's: memory, and what `request()` returned
/// when it is not requests (its place is named when a line is known).
fn placeless(why: &str) -> bool {
    why.starts_with("out of memory") || why.starts_with("request(): ")
}

/// Seeds: scripts in the style of wrk's own examples (a POST, per-thread counters, a
/// response() that reads headers, a delay, a request() that pipelines), a syntax error, a runtime
/// error, a request() returning nothing, and LuaJIT bytecode in disguise.
pub fn seeds() -> Vec<Vec<u8>> {
    [
        "wrk.method = \"POST\"\nwrk.body = \"foo=bar&baz=quux\"\nwrk.headers[\"Content-Type\"] = \"application/x-www-form-urlencoded\"\n",
        "local counter = 1\nlocal threads = {}\nfunction setup(thread)\n   thread:set(\"id\", counter)\n   table.insert(threads, thread)\n   counter = counter + 1\nend\nfunction init(args)\n   requests = 0\n   responses = 0\n   print(\"thread\", id, #args)\nend\nfunction request()\n   requests = requests + 1\n   return wrk.request()\nend\nfunction response(status, headers, body)\n   responses = responses + 1\n   if headers[\"Server\"] ~= \"webstand\" or #body ~= 5 then error(\"bad\") end\nend\n",
        "function delay()\n   return math.random(10, 50)\nend\n",
        "init = function(args)\n   local r = {}\n   for i = 1, 3 do\n      r[i] = wrk.format(nil, \"/\" .. i)\n   end\n   req = table.concat(r)\nend\nrequest = function()\n   return req\nend\n",
        "function request()\n   return wrk.format(\"GET\", \"/a b\", { Host = \"x\" }, string.rep(\"z\", 10))\nend\n",
        "function init(args) local x = = 1 end\n",
        "function request()\n   error(\"no more\")\nend\n",
        "function request() end\n",
        "local f = loadstring(string.dump(function() return 1 end))\nreturn f and f()\n",
        "\x1bLJ\x02\x0a",
        "while true do end\n",
        "function response() local t = {} for i = 1, 1e9 do t[i] = i end end\n",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}
