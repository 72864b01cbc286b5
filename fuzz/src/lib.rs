//! Coverage-guided fuzz targets for every parser that reads the other side's bytes: one plain
//! function per target (`TARGETS`), which panics when a property fails. AFL++ drives them through
//! src/bin/afl.rs (`scripts/fuzz.sh`); tests/replay.rs replays the committed corpora (corpora/)
//! through the same functions as an ordinary test; src/bin/seeds.rs makes the seed corpora with
//! the project's own encoders. Properties beyond "no panic": bounded allocation (alloc.rs),
//! round-trips where an encoder exists, agreement where two readers read the same bytes.

pub mod alloc;
pub mod engine_h2;
pub mod engine_h3;
pub mod files;
pub mod frames;
pub mod gateway;
pub mod h2;
pub mod h3;
pub mod http1;
pub mod messages;
pub mod probe_response;
pub mod seeds;
pub mod serve;
pub mod split;
pub mod wrk_script;

/// A target: it panics when a property fails for this input.
pub type Target = fn(&[u8]);

/// Every target: its name (its corpus folder under corpora/) and its function.
pub const TARGETS: &[(&str, Target)] = &[
    ("http1_request", http1::request),
    ("chunked_strict", http1::chunked_strict),
    ("chunked_lenient", http1::chunked_lenient),
    ("engine_response", http1::engine_response),
    ("h2_frames", h2::frames),
    ("hpack_server", h2::hpack_server),
    ("hpack_client", h2::hpack_client),
    ("h3_frames", h3::frames),
    ("qpack", h3::qpack),
    ("fastcgi", gateway::fastcgi),
    ("cgi_output", gateway::cgi_output),
    ("serve_config", files::serve_config),
    ("url_file", files::url_file),
    ("webstone_list", files::webstone_list),
    ("probe_cases", files::probe_cases),
    ("serve_h1", serve::http1),
    ("serve_h2", serve::http2),
    ("engine_h2", engine_h2::target),
    ("engine_h3", engine_h3::target),
    ("probe_response", probe_response::target),
    ("wrk_script", wrk_script::target),
];

/// The target called `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|t| t.0 == name).map(|t| t.1)
}
