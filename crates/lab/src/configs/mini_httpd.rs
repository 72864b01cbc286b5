//! mini_httpd in the foreground (`-D`), configured by flags. No `-l`: without it mini_httpd logs
//! nothing, while `-l /dev/null` would format and write a log line per request.

use super::{worker_user, Ctx, Launch};
use crate::tls;

pub(super) fn launch(c: &Ctx) -> Launch {
    let mut args: Vec<String> = ["-D", "-h", "127.0.0.1", "-p"]
        .into_iter()
        .map(String::from)
        .collect();
    args.extend([
        c.port.to_string(),
        "-d".into(),
        c.d.clone(),
        "-c".into(),
        "cgi-bin/*".into(),
        "-i".into(),
        format!("{}/mini_httpd.pid", c.wd),
    ]);
    if c.root {
        args.extend(["-u".into(), worker_user().into()]);
    }
    if c.chroot {
        args.push("-r".into());
    }
    // HTTPS: key and certificate in one file, the shared TLS 1.2 preference (the TLS 1.3 suites and
    // the protocol floor are OpenSSL's defaults: mini_httpd has no setting for them).
    if let Some(cert) = c.tls {
        args.extend([
            "-S".into(),
            "-E".into(),
            cert.combined_file().display().to_string(),
            "-Y".into(),
            tls::openssl_ciphers(),
        ]);
    }
    Launch {
        args,
        ..Default::default()
    }
}
