//! Files a user hands webstand: serve's TOML config, http_load URL files, WebStone file lists and
//! the probe's case file. Text that does not parse is a clear error (never a panic); a list that
//! parses is read back the same way twice.

/// The input as text, as the loaders read it (a file that is not UTF-8 never reaches them).
fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Serve's config: parses or is refused; a parsed one yields its request limits.
pub fn serve_config(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(config) = toml::from_str::<webstand_server::Config>(text) {
        let _ = config.limits();
        let _ = config.plain_listen();
    }
}

/// A URL file: parses or is refused with a message; the paths it lists each start with '/'.
pub fn url_file(data: &[u8]) {
    let Some(text) = text(data) else { return };
    match webstand_workload::urlfile::parse(text, "fuzz") {
        Ok(list) => {
            for path in list.paths() {
                assert!(path.starts_with('/'), "{path:?}");
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// A WebStone list: parses or is refused; a parsed one has a weight to draw by.
pub fn webstone_list(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(list) = webstand_workload::webstone::parse(text, "fuzz") {
        assert!(list.total_weight() > 0, "a list with nothing to draw");
    }
}

/// The probe's case file: loads or is refused; loading the same text twice gives the same cases.
pub fn probe_cases(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let first = webstand_probe::load("fuzz", text).map(|c| c.len());
    let second = webstand_probe::load("fuzz", text).map(|c| c.len());
    assert_eq!(first.is_ok(), second.is_ok());
    if let (Ok(a), Ok(b)) = (first, second) {
        assert_eq!(a, b);
    }
}
