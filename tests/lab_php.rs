//! The lab's dynamic workloads end to end, on Debian's real PHP-FPM, MariaDB and WordPress: the `php`
//! page through every server that passes PHP on (its bytes checked on every response, CPU per
//! request of the server alone and with PHP-FPM), seed 004's experiment as `sweep --preset
//! wordpress`, the lab's WordPress index page fetched with curl through nginx and recognised,
//! nothing the lab started left running afterwards, and a missing php-fpm said in one
//! line. Each command runs with a TMPDIR of the test's own, so the processes it leaves (if any) are
//! told apart from other tests' by their command lines.

use crate::common;

use std::time::Duration;

/// `webstand ARGS` with TMPDIR set to a new directory; the output, and what was left running there.
fn run_in_own_tmp(args: &[&str], limit: Duration) -> (std::process::Output, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let tmpdir = tmp.path().to_str().unwrap().to_string();
    let out = common::run_with_env(args, &[("TMPDIR", &tmpdir)], limit);
    (out, common::lab::processes_under(tmp.path()))
}

/// The `php` workload's row of `server` in a comparison's JSON.
fn php_row<'a>(doc: &'a serde_json::Value, server: &str) -> &'a serde_json::Value {
    common::lab::row(doc, "php", server)
}

#[test]
fn the_php_page_through_every_server_is_verified_with_both_cpu_figures() {
    let _lab = common::busy_lab();
    let servers = ["nginx", "lighttpd", "apache", "apache-modphp", "builtin"];
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("h.db");
    let (out, left) = run_in_own_tmp(
        &[
            &["compare", "-q", "--json", "--db", db_path.to_str().unwrap()][..],
            &common::short_compare(&servers.join(","), "php", "1,4", "2s", &["-n", "400"]),
        ]
        .concat(),
        Duration::from_secs(150),
    );
    assert!(left.is_empty(), "left running: {left:?}");
    let stderr = common::stderr(&out);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    for server in servers {
        let row = php_row(&doc, server);
        assert_eq!(row["measured"], true, "{row}");
        // Every body was checked against the page's bytes: a wrong one would be an error.
        assert_eq!(row["errors"], 0, "{row}");
        assert!(row["peak_hits_per_sec"].as_f64().unwrap() > 10.0, "{row}");
        let alone = row["server_cpu_us"].as_f64().expect("server CPU");
        let with_php = row["with_backends_cpu_us"]
            .as_f64()
            .expect("server+php CPU");
        assert!(alone > 0.0 && with_php >= alone, "{row}");
    }
    // apache's mod_php runs PHP in its own children: PHP-FPM did nothing for it.
    let modphp = php_row(&doc, "apache-modphp");
    let (alone, with_php) = (
        modphp["server_cpu_us"].as_f64().unwrap(),
        modphp["with_backends_cpu_us"].as_f64().unwrap(),
    );
    assert!(with_php < alone * 1.2, "{modphp}");
    // Every level completed its requests and was saved: 5 servers × 2 levels.
    let history = common::run(&["history", "--db", db_path.to_str().unwrap()]);
    let line = common::stdout(&history)
        .lines()
        .find(|l| l.contains("compare"))
        .map(str::to_string)
        .expect("the comparison in the history");
    let cells: Vec<&str> = line.split_whitespace().collect();
    let at = cells.iter().position(|c| *c == "compare").unwrap();
    assert_eq!(cells[at + 1], "complete", "{line}");
    let db = db_path.to_str().unwrap();
    let csv = common::stdout(&common::run(&[
        "export", "--db", db, "last", "--format", "csv",
    ]));
    assert_eq!(csv.lines().count(), 1 + 10, "levels saved: {csv}");
    assert_backends_cpu_saved(db_path.to_str().unwrap(), &doc, &servers);
}

/// The history keeps PHP-FPM's CPU beside each server's: `show` prints the srv+php column as
/// compare did, and the CSV's `server_with_backends_cpu_us_per_request` at each server's peak is
/// the row's figure (one round: the peak level's own).
fn assert_backends_cpu_saved(db: &str, doc: &serde_json::Value, servers: &[&str]) {
    let show = common::stdout(&common::run(&["show", "--db", db, "last"]));
    assert!(show.contains("srv+php CPU-µs/req"), "{show}");
    let csv = common::stdout(&common::run(&[
        "export", "--db", db, "last", "--format", "csv",
    ]));
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| lines[0].iter().position(|c| *c == name).unwrap();
    for server in servers {
        let row = php_row(doc, server);
        let (with_php, clients) = (
            row["with_backends_cpu_us"].as_f64().unwrap(),
            row["clients_at_peak"].as_u64().unwrap().to_string(),
        );
        let group = format!("{server}/php");
        let level = lines[1..]
            .iter()
            .find(|l| l[col("group")] == group && l[col("clients")] == clients)
            .unwrap_or_else(|| panic!("no {group} at {clients} in {csv}"));
        let saved: f64 = level[col("server_with_backends_cpu_us_per_request")]
            .parse()
            .unwrap_or_else(|e| panic!("{e}: {server} in {csv}"));
        assert!(
            (saved - with_php).abs() < 0.001,
            "{server}: {saved} vs {row}"
        );
        // The server's rows: its peak, then what the peak cost (the CPU with PHP among it).
        let shown = show
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(server))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            shown
                .split_whitespace()
                .any(|c| c == format!("{with_php:.1}")),
            "{server}: {with_php:.1} not in {shown:?}"
        );
    }
}

#[test]
fn the_wordpress_preset_reproduces_seed_004s_table() {
    let _lab = common::busy_lab();
    let (out, left) = run_in_own_tmp(
        &["sweep", "--preset", "wordpress", "-n", "60", "-c", "10"],
        Duration::from_secs(170),
    );
    assert!(left.is_empty(), "left running: {left:?}");
    let text = common::stdout(&out);
    let stderr = common::stderr(&out);
    assert!(out.status.success(), "{text}\n{stderr}");
    // The site: Debian's WordPress with generated posts, its index page about 20 KiB.
    let line = stderr
        .lines()
        .find(|l| l.contains("WordPress:") && l.contains("index page"))
        .unwrap_or_else(|| panic!("no WordPress line in {stderr}"));
    let bytes: usize = line
        .split("index page ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in {line}"));
    assert!((18 * 1024..=23 * 1024).contains(&bytes), "{line}");
    let table = text
        .split_once("Seed 004")
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("no seed table in\n{text}"));
    // Its header names every server (the table may be laid out in parts to fit 120 columns).
    let header = table
        .lines()
        .filter(|l| l.starts_with("Metric"))
        .collect::<Vec<_>>()
        .join(" ");
    for server in [
        "apache-modphp",
        "lighttpd",
        "nginx",
        "h2o",
        "caddy",
        "builtin",
    ] {
        assert!(header.contains(server), "{server} column missing: {header}");
    }
    for row in [
        "Time taken for tests",
        "Total transferred",
        "HTML transferred",
        "Requests per second",
        "Time per request",
        "Transfer rate",
        "Server CPU per request",
        "Server + PHP CPU per request",
    ] {
        // The table may come in parts to fit 120 columns: a row's cells are those of every part.
        let parts: Vec<&str> = table.lines().filter(|l| l.starts_with(row)).collect();
        assert!(!parts.is_empty(), "no {row} row in\n{table}");
        let line = parts.join("  ");
        // Every column, builtin's included, has a figure in every row.
        let cells: usize = parts
            .iter()
            .map(|p| {
                p[row.len()..]
                    .split("  ")
                    .filter(|c| !c.trim().is_empty())
                    .count()
            })
            .sum();
        assert!(cells >= 7, "{line}");
    }
    // Compressed by every server (builtin's --fastcgi-gzip too): the HTML moved per request is
    // well under the page's size, and more than nothing.
    let html = table
        .lines()
        .filter(|l| l.starts_with("HTML transferred"))
        .collect::<Vec<_>>()
        .join(" ");
    let per_request: Vec<u64> = html
        .split_whitespace()
        .filter_map(|w| w.parse::<u64>().ok())
        .map(|b| b / 60)
        .collect();
    assert_eq!(per_request.len(), 7, "{html}");
    assert!(
        per_request
            .iter()
            .all(|&b| b > 1024 && b < bytes as u64 / 2),
        "{html}"
    );
    assert!(text.contains("Workload: wordpress"), "{text}");
}

/// The lab's WordPress as a browser gets it: the site installed into a docroot (MariaDB, PHP-FPM,
/// generated posts), nginx passing PHP on as the lab configures it, and the index page fetched
/// with curl: a real WordPress page (its generator tag, the twentytwentyone theme's stylesheet,
/// one article per generated post, about the size the lab measured).
#[test]
fn the_lab_wordpress_index_page_is_a_real_wordpress_page() {
    let _lab = common::busy_lab();
    use webstand_lab::php::{fpm, wordpress, Backends, Setup as PhpSetup};
    use webstand_lab::servers::config::Pass;
    use webstand_lab::servers::{locate, Kind, Server, Setup};
    let dir = tempfile::tempdir().unwrap();
    // Servers started as root drop to www-data: the docroot must be reachable.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let doc = dir.path().join("docroot");
    webstand_lab::compare::prepare_docroot(&doc, 1 << 20).unwrap();
    let php = PhpSetup {
        fpm: fpm::PROGRAM.into(),
        children: 2,
        backlog: 64,
        cpus: None,
        wordpress: true,
    };
    let mut backends = Backends::start(&doc, &php).unwrap_or_else(|e| panic!("{e:#}"));
    let site = backends.site.clone().expect("the WordPress site");
    let mut setup = Setup::new(&doc);
    setup.php = Some(Pass {
        socket: backends.socket().display().to_string(),
        children: php.children,
    });
    let nginx = locate(Kind::parse("nginx").unwrap(), None).unwrap_or_else(|e| panic!("{e}"));
    let mut server = Server::start(&nginx, &setup).unwrap_or_else(|e| panic!("{e:#}"));
    let get = |path: &str| {
        let got = common::output_within(
            std::process::Command::new(common::require("curl"))
                .args(["-s", "-S", "--max-time", "30", "-D", "-"])
                .arg(format!("http://{}{path}", server.addr)),
            Duration::from_secs(40),
        );
        assert!(got.status.success(), "{path}: {}", common::stderr(&got));
        let text = common::stdout(&got);
        let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
        assert!(head.starts_with("HTTP/1.1 200"), "{path}: {head}");
        body.to_string()
    };
    let page = get("/");
    assert!(
        page.contains("<meta name=\"generator\" content=\"WordPress "),
        "no generator tag: {page}"
    );
    assert_eq!(
        page.matches("<article id=\"post-").count(),
        site.posts,
        "{page}"
    );
    // The theme's stylesheet, linked as WordPress enqueues it, is the theme's own file.
    let link = page
        .lines()
        .find(|l| l.contains("<link rel='stylesheet' id='twenty-twenty-one-style-css'"))
        .unwrap_or_else(|| panic!("no theme stylesheet link in {page}"));
    let theme_css = format!("/wp-content/themes/{}/style.css?ver=", wordpress::THEME);
    let at = link
        .find(&theme_css)
        .unwrap_or_else(|| panic!("{link} is not {theme_css}"));
    let path = link[at..].split('\'').next().unwrap();
    let css = get(path);
    server.stop().unwrap();
    backends.stop().unwrap();
    assert!(
        css.contains("Theme Name: Twenty Twenty-One"),
        "{path}: {css}"
    );
    // About the size the lab measured when it rendered the page (with another Host).
    let (bytes, measured) = (page.len() as f64, site.page_bytes as f64);
    assert!(
        (bytes - measured).abs() < measured * 0.05,
        "{bytes} bytes, the lab measured {measured}"
    );
}

#[test]
fn a_missing_php_fpm_is_one_line_naming_the_package() {
    let _lab = common::busy_lab();
    let (out, left) = run_in_own_tmp(
        &[
            &["compare", "-q", "--php-fpm", "/nonexistent/php-fpm8.2"][..],
            &common::short_compare("nginx", "php", "1", "200ms", &[]),
        ]
        .concat(),
        Duration::from_secs(30),
    );
    assert!(left.is_empty(), "{left:?}");
    assert!(!out.status.success());
    let err = common::stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("php-fpm8.2") && l.contains("apt-get install php8.2-fpm")),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
