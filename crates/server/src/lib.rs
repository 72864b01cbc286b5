//! `webstand serve`: webstand's own event-driven web server, the embedded default target.
//!
//! It owns the listener, the connection state machine, request parsing, static files (cache, ranges,
//! conditional GET), CGI, basic auth, throttling and its config. It knows nothing of the load
//! generator or of reports. (Being written under issue 3.)
