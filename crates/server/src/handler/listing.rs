//! Directory listings (off unless `listing` is set): names HTML-escaped in text and percent-encoded
//! in links, dot-files and the server's own files left out, directories first.

use crate::own_files::OwnFiles;
// The one HTML escaper of webstand (the report uses it too): text and quoted attribute values.
use html_escape::encode_quoted_attribute_to_string as escape_html;
use std::fs::File;
use std::io;

/// Renders the listing of the open directory `dir` whose URL path is `url_path` (ends with '/').
pub fn render(dir: &File, url_path: &str, own: &OwnFiles) -> io::Result<String> {
    let mut entries = read_dir(dir, own)?;
    entries.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut html = String::with_capacity(512 + entries.len() * 96);
    let mut title = String::new();
    escape_html(url_path, &mut title);
    html.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of ");
    html.push_str(&title);
    html.push_str("</title></head><body><h1>Index of ");
    html.push_str(&title);
    html.push_str("</h1><ul>\n");
    if url_path != "/" {
        html.push_str("<li><a href=\"../\">../</a></li>\n");
    }
    for (name, is_dir, size) in entries {
        let mut href = String::new();
        crate::path::encode(&name, &mut href);
        let mut shown = String::new();
        escape_html(&name, &mut shown);
        let slash = if is_dir { "/" } else { "" };
        let mut href_attr = String::new();
        escape_html(&href, &mut href_attr);
        html.push_str(&format!(
            "<li><a href=\"./{href_attr}{slash}\">{shown}{slash}</a>"
        ));
        if !is_dir {
            html.push_str(&format!(" {size}"));
        }
        html.push_str("</li>\n");
    }
    html.push_str("</ul></body></html>\n");
    Ok(html)
}

/// (name, is directory, size) of each visible entry, read through the open descriptor so the
/// listing is of exactly the directory that was resolved under the root.
fn read_dir(dir: &File, own: &OwnFiles) -> io::Result<Vec<(String, bool, u64)>> {
    use std::os::fd::AsRawFd;
    let fd = dir.as_raw_fd();
    let mut out = Vec::new();
    // SAFETY: dup of an open descriptor; fdopendir takes ownership of the duplicate and closedir
    // releases it; readdir entries are read before the next call.
    unsafe {
        let dup = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0);
        if dup < 0 {
            return Err(io::Error::last_os_error());
        }
        libc::lseek(dup, 0, libc::SEEK_SET);
        let d = libc::fdopendir(dup);
        if d.is_null() {
            libc::close(dup);
            return Err(io::Error::last_os_error());
        }
        loop {
            let ent = libc::readdir(d);
            if ent.is_null() {
                break;
            }
            let name = std::ffi::CStr::from_ptr((*ent).d_name.as_ptr())
                .to_string_lossy()
                .into_owned();
            if name.starts_with('.') {
                continue;
            }
            let mut st: libc::stat = std::mem::zeroed();
            let cname = std::ffi::CString::new(name.clone()).unwrap_or_default();
            if libc::fstatat(fd, cname.as_ptr(), &mut st, 0) != 0 {
                continue;
            }
            if own.contains_id((st.st_dev, st.st_ino)) {
                continue;
            }
            let is_dir = st.st_mode & libc::S_IFMT == libc::S_IFDIR;
            out.push((name, is_dir, st.st_size as u64));
        }
        libc::closedir(d);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_and_hidden_files_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("<img src=x onerror=alert(1)>.txt"), "x").unwrap();
        std::fs::write(dir.path().join("a&b \"q\".html"), "xy").unwrap();
        std::fs::write(dir.path().join(".secret"), "s").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let none = OwnFiles::collect(&crate::config::Config::default());
        let html = render(&File::open(dir.path()).unwrap(), "/d<ir>/", &none).unwrap();
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;.txt"));
        assert!(
            html.contains("href=\"./%3Cimg%20src=x%20onerror=alert(1)%3E.txt\""),
            "{html}"
        );
        assert!(html.contains("a&amp;b &quot;q&quot;.html"));
        assert!(html.contains("Index of /d&lt;ir&gt;/"));
        assert!(html.contains("href=\"./sub/\""));
        assert!(!html.contains("secret"));
    }
}
