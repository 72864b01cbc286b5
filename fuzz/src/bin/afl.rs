//! The AFL++ harness: `afl TARGET`, run by `cargo afl fuzz` (scripts/fuzz.sh), feeds each input
//! to the target of that name (src/lib.rs lists them).

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let Some(target) = webstand_fuzz::target(&name) else {
        let names: Vec<&str> = webstand_fuzz::TARGETS.iter().map(|t| t.0).collect();
        eprintln!("afl: unknown target {name:?}; one of: {}", names.join(", "));
        std::process::exit(2);
    };
    afl::fuzz!(|data: &[u8]| target(data));
}
