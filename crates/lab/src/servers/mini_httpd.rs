//! mini_httpd in the foreground (`-D`), configured by flags. No `-l`: without it mini_httpd logs
//! nothing, while `-l /dev/null` would format and write a log line per request.

use super::config::{worker_user, Ctx, Launch};
use super::Profile;

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
    if c.root {
        args.extend(["-u".into(), worker_user().into()]);
    }
    if c.chroot {
        args.push("-r".into());
    }
    Launch {
        args,
        ..Default::default()
    }
}
