//! mini_httpd in the foreground (`-D`), configured by flags. No `-l`: without it mini_httpd logs
//! nothing, while `-l /dev/null` would format and write a log line per request.

use super::config::{Ctx, Launch};
use super::Profile;
use crate::tls;

pub(super) const PROFILE: Profile = Profile {
    name: "mini_httpd",
    aliases: &["mini-httpd", "minihttpd"],
    package: "mini-httpd",
    binaries: &["mini_httpd"],
    version_flag: "-V",
    model: "fork per connection",
    keeps_alive: false,
    cgi_by_fcgiwrap: false,
    configures: (true, true, false),
    launch,
};

fn launch(c: &Ctx) -> Launch {
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
    if let Some(w) = c.worker {
        args.extend(["-u".into(), w.name.clone()]);
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
