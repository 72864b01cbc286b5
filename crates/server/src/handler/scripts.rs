//! Which requests a program answers. A CGI URL (it matched a `--cgi` pattern) names the first
//! regular file along its decoded path, which must be executable; the rest is PATH_INFO. A FastCGI
//! script is the first prefix of the decoded path (ending before a '/', the rest being PATH_INFO)
//! that matches a `--fastcgi` rule and names a regular file under the root, or a directory URL
//! whose index file (`--index index.php`) matches one. A matching path with no file behind it is
//! 404 here, never a request a program has to refuse; the server's own files are never run.

use crate::docroot::open_error_status;
use crate::site::Site;
use std::sync::Arc;

/// The CGI program a request names.
pub struct CgiScript {
    /// Path of the program relative to the root.
    pub rel: String,
    /// The decoded rest of the URL path after the program ("" or "/…").
    pub path_info: String,
    pub user: Option<Arc<str>>,
}

impl CgiScript {
    pub fn with_user(self, user: Option<Arc<str>>) -> CgiScript {
        CgiScript { user, ..self }
    }
}

/// The FastCGI script a request names.
pub struct FastCgiScript {
    /// The `--fastcgi` rule it matched.
    pub rule: usize,
    /// The script's URL path ("/dir/index.php") and the rest ("" or "/…").
    pub script_name: String,
    pub path_info: String,
    pub user: Option<Arc<str>>,
}

impl FastCgiScript {
    pub fn with_user(self, user: Option<Arc<str>>) -> FastCgiScript {
        FastCgiScript { user, ..self }
    }
}

/// Splits "cgi-bin/prog/extra/info" (a decoded path) into the program (the first regular file
/// along the path) and its PATH_INFO; Err is the status refusing it.
pub fn cgi_script(site: &Site, rel: &str) -> Result<CgiScript, u16> {
    use std::os::unix::fs::PermissionsExt;
    let mut end = 0;
    while end < rel.len() {
        end = rel[end + 1..].find('/').map_or(rel.len(), |i| end + 1 + i);
        let candidate = &rel[..end];
        let meta = site
            .root
            .metadata_beneath(candidate)
            .map_err(|e| open_error_status(&e))?;
        if meta.is_file() {
            if site.own_files.contains(&meta) {
                return Err(404);
            }
            if meta.permissions().mode() & 0o111 == 0 {
                return Err(403);
            }
            return Ok(CgiScript {
                rel: candidate.to_string(),
                path_info: rel[end..].to_string(),
                user: None,
            });
        }
        if !meta.is_dir() {
            return Err(403);
        }
    }
    Err(404)
}

/// The FastCGI script the decoded path `rel` names, if any; Err is the status refusing it.
pub fn fastcgi_script(
    site: &Site,
    rel: &str,
    dir_request: bool,
) -> Result<Option<FastCgiScript>, u16> {
    let found = |rule, script_name, path_info| FastCgiScript {
        rule,
        script_name,
        path_info,
        user: None,
    };
    if dir_request {
        let index = match rel {
            "" => format!("/{}", site.config.index),
            _ => format!("/{rel}/{}", site.config.index),
        };
        if let Some(rule) = site.fastcgi_rule(&index) {
            return Ok(match site.root.metadata_beneath(&index[1..]) {
                Ok(m) if m.is_file() && !site.own_files.contains(&m) => {
                    Some(found(rule, index, String::new()))
                }
                // No index script: the directory is answered as any other.
                _ => None,
            });
        }
    }
    let path = format!("/{rel}");
    let ends = path.match_indices('/').map(|(i, _)| i).skip(1);
    for end in ends.chain([path.len()]) {
        let candidate = &path[..end];
        let Some(rule) = site.fastcgi_rule(candidate) else {
            continue;
        };
        let meta = site
            .root
            .metadata_beneath(&candidate[1..])
            .map_err(|e| open_error_status(&e))?;
        if meta.is_dir() {
            continue;
        }
        if !meta.is_file() || site.own_files.contains(&meta) {
            return Err(404);
        }
        let info = path[end..].to_string();
        return Ok(Some(found(rule, candidate.to_string(), info)));
    }
    Ok(None)
}
