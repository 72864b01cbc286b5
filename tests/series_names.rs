//! A series has one name everywhere: a sweep's and a real comparison's (builtin and nginx on 2k)
//! as `show` lists them on its `Series:` line, the HTML report's legends and summary, the CSV's
//! `series` column and the JSON's `series` keys.

use crate::common::{run, serve, short_compare, stderr, stdout};

/// `webstand ARGS --db DB`, which must succeed; its standard output.
fn ok(db: &str, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--db", db]);
    let out = run(&all);
    assert!(out.status.success(), "{all:?}: {}", stderr(&out));
    stdout(&out)
}

/// Each name once, in the order first met.
fn once(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// The names of run `id`'s series as `show`, the report, the CSV and the JSON give them; each must
/// be `want`.
fn assert_named_alike(db: &str, dir: &std::path::Path, id: &str, want: &[String]) {
    let shown = ok(db, &["show", id]);
    let line = (shown.lines())
        .find_map(|l| l.trim_start().strip_prefix("Series:"))
        .unwrap_or_else(|| panic!("no Series line in {shown}"));
    assert_eq!(line.trim(), want.join(", "), "show: {shown}");

    let csv = ok(db, &["export", id, "--format", "csv"]);
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][0], "series", "the first column: {csv}");
    assert_eq!(
        once(rows[1..].iter().map(|r| r[0].to_string())),
        want,
        "CSV: {csv}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&ok(db, &["export", id, "--format", "json"])).unwrap();
    let keys = (json["levels"].as_array().unwrap().iter())
        .map(|l| l["series"].as_str().expect("a series key").to_string());
    assert_eq!(once(keys), want, "JSON: {json:#}");

    let page = dir.join(format!("report{id}.html"));
    ok(db, &["report", id, "-o", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    // A legend entry carries its full name in its <title> (the text may be shortened to fit);
    // the latency-by-percentile chart's adds the clients of the series' peak ("… @2"), or with a
    // single series names its levels ("1 client", "2 clients").
    let legends = (html.split(r#"<text class="legend""#).skip(1))
        .map(|t| {
            t.split("<title>")
                .nth(1)
                .unwrap()
                .split("</title>")
                .next()
                .unwrap()
        })
        .filter(|t| !t.ends_with(" client") && !t.ends_with(" clients"))
        .map(|t| match t.rsplit_once(" @") {
            Some((name, at)) if at.parse::<usize>().is_ok() => name.to_string(),
            _ => t.to_string(),
        });
    let legends = once(legends);
    assert_eq!(legends, want, "the report's legends: {html}");
    for name in want {
        assert!(
            html.contains(&format!("<td>{name}")),
            "{name} in the report's summary: {html}"
        );
    }
}

#[test]
fn a_series_is_named_alike_in_show_the_report_and_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    assert!(run(&["fixtures", www.to_str().unwrap()]).status.success());
    let db = dir.path().join("h.db").to_string_lossy().into_owned();
    let server = serve(&www, &[]);
    let url = format!("http://{}/2k.html", server.addr);
    let sweep = [
        "sweep", &url, "-c", "1,2", "-d", "300ms", "--warmup", "0", "-q",
    ];
    ok(&db, &sweep);
    let mut compare = vec!["compare"];
    compare.extend(short_compare("builtin,nginx", "2k", "1", "300ms", &["-q"]));
    let printed = ok(&db, &compare);
    // The comparison's console names its servers and workload; its series join the two.
    assert!(
        printed.contains("builtin") && printed.contains("nginx") && printed.contains("2k"),
        "{printed}"
    );
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // The sweep's server is the Server header it saw, the workload the URL's path.
    assert_named_alike(&db, dir.path(), "1", &names(&["webstand · /2k.html"]));
    assert_named_alike(
        &db,
        dir.path(),
        "2",
        &names(&["builtin · 2k", "nginx · 2k"]),
    );
}
