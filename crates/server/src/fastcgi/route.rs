//! Which requests go to a FastCGI backend: the first prefix of the decoded path (ending before a
//! '/', the rest being PATH_INFO) that matches a `--fastcgi` rule and names a regular file under
//! the root, or a directory URL whose index file (`--index index.php`) matches one. A matching path
//! with no file behind it is 404 here, never a request the backend has to refuse.

use super::Request;
use crate::conn::Conn;
use crate::handler::{open_error_status, Ctx, Logged};
use crate::protocol::Channel;
use crate::request::Head;
use std::sync::Arc;

/// The request as the handler has it.
pub struct Asked<'a> {
    pub head: &'a Head<'a>,
    pub body: &'a [u8],
    pub query: &'a [u8],
    pub user: Option<Arc<str>>,
    pub ch: Channel,
}

impl Ctx {
    /// Starts a FastCGI job when the decoded path (in `self.rel`) names a script. None: not a
    /// script, the static path answers; Some(None): the job runs; Some(Some(answer)): refused.
    pub(crate) fn route_fastcgi(
        &mut self,
        conn: &mut Conn,
        asked: &Asked,
        dir_request: bool,
        out: &mut Vec<u8>,
    ) -> Option<Option<Logged>> {
        if self.shared.fastcgi.is_empty() {
            return None;
        }
        let rel = self.rel.clone();
        match self.find_fastcgi_script(&rel, dir_request) {
            Ok(None) => None,
            Ok(Some(_)) if self.job_slot_taken(conn, asked.ch) => Some(None),
            Ok(Some((rule, script_name, path_info))) => {
                let req = Request {
                    head: asked.head,
                    body: asked.body,
                    query: asked.query,
                    rule,
                    script_name,
                    path_info,
                    user: asked.user.clone(),
                    ch: asked.ch,
                };
                self.start_fastcgi(conn, req);
                Some(None)
            }
            Err(status) => Some(Some(
                self.simple_answer(out, asked.head, asked.ch, status, b""),
            )),
        }
    }

    /// (rule, SCRIPT_NAME, PATH_INFO) of the script `rel` names, if any.
    fn find_fastcgi_script(
        &self,
        rel: &str,
        dir_request: bool,
    ) -> Result<Option<(usize, String, String)>, u16> {
        let shared = &self.shared;
        if dir_request {
            let index = match rel {
                "" => format!("/{}", shared.config.index),
                _ => format!("/{rel}/{}", shared.config.index),
            };
            if let Some(rule) = shared.fastcgi_rule(&index) {
                return Ok(match shared.root.metadata_beneath(&index[1..]) {
                    Ok(m) if m.is_file() && !shared.own_files.contains(&m) => {
                        Some((rule, index, String::new()))
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
            let Some(rule) = shared.fastcgi_rule(candidate) else {
                continue;
            };
            let meta = shared
                .root
                .metadata_beneath(&candidate[1..])
                .map_err(|e| open_error_status(&e))?;
            if meta.is_dir() {
                continue;
            }
            if !meta.is_file() || shared.own_files.contains(&meta) {
                return Err(404);
            }
            let info = &path[end..];
            return Ok(Some((rule, candidate.to_string(), info.to_string())));
        }
        Ok(None)
    }
}
