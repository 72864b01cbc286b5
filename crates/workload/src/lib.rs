//! What to request: the deterministic fixtures docroot and its manifest, URL files (http_load's model),
//! WebStone's weighted file lists, and checksums. It turns each into `RequestSpec`s and a `Pick` for the
//! engine; it knows nothing of sockets or reports. (Being written under issue 4.)
