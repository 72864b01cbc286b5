//! What to request: the deterministic fixtures docroot and its manifest, URL files (http_load's model),
//! WebStone's weighted file lists, and checksums. It turns each into `RequestSpec`s and a `Pick` for the
//! engine; it knows nothing of sockets or reports. (Being written under issue 4.)

pub mod fixtures; // the deterministic docroot and its manifest
pub mod urlfile; // http_load-style URL files
pub mod webstone; // WebStone 1.1 page classes and 2.0.1 weighted file lists, with the seed presets
