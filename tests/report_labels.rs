//! The HTML report says what was compared, checked in headless Chromium on runs measured over
//! loopback: a comparison of webstand serve and nginx (levels 1, 4, 16) and a bench against webstand
//! serve. The lines are named by server and workload, the summary table comes first with each
//! series' peak and its ratio to the first, the clients axis is log 2, and the median has a panel
//! of its own. `diff` pairs the comparison's 4-client levels with the bench at -c 4.

use crate::common;

use common::{run_with_timeout, serve, short_compare, stderr, stdout};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Headless Chromium's DOM of a local page, after its script ran.
fn rendered_dom(page: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-sync",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("chromium must be installed (scripts/install-deps.sh installs it)");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        dom.contains(r#"data-rendered="yes""#),
        "the page's script did not run"
    );
    dom
}

/// The SVG of one chart in the DOM.
fn chart<'a>(dom: &'a str, name: &str) -> &'a str {
    dom.split(&format!(r#"data-chart="{name}""#))
        .nth(1)
        .and_then(|s| s.split("</svg>").next())
        .unwrap_or_else(|| panic!("no chart {name}"))
}

/// The largest y tick label of a chart, in its units.
fn y_top(svg: &str) -> f64 {
    svg.split(r#"class="y-tick""#)
        .skip(1)
        .filter_map(|s| s.split('>').nth(1)?.split('<').next())
        .filter_map(|t| match t.strip_suffix('k') {
            Some(k) => k.parse::<f64>().ok().map(|v| v * 1000.0),
            None => t.parse().ok(),
        })
        .fold(0.0, f64::max)
}

#[test]
fn the_report_names_servers_and_workloads_and_starts_with_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db_s = db.to_str().unwrap();
    let ok = |args: &[&str]| {
        let out = run_with_timeout(args, Duration::from_secs(180));
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    ok(&[
        &["compare", "-q", "--db", db_s][..],
        &short_compare("builtin,nginx", "2k", "1,4,16", "400ms", &[]),
    ]
    .concat());
    let www = dir.path().join("www");
    ok(&["fixtures", www.to_str().unwrap()]);
    let server = serve(&www, &[]);
    let bench_url = format!("http://{}/2k.html", server.addr);
    ok(&[
        "bench", "-c", "4", "-n", "2000", "-q", "--db", db_s, &bench_url,
    ]);

    // diff: a comparison and a bench meet at their common client count.
    let diff = ok(&["diff", "--db", db_s, "1", "2"]);
    assert!(
        diff.contains("A: builtin/2k @ 4 clients  vs  B: 4 clients"),
        "{diff}"
    );
    assert!(
        diff.contains("A: nginx/2k @ 4 clients  vs  B: 4 clients"),
        "{diff}"
    );

    let page = dir.path().join("report.html");
    ok(&[
        "report",
        "--db",
        db_s,
        "1",
        "2",
        "-o",
        page.to_str().unwrap(),
    ]);
    let dom = rendered_dom(&page);
    let hits = chart(&dom, "hits");
    for name in ["builtin · 2k", "nginx · 2k", "webstand · /2k.html"] {
        assert!(
            hits.contains(&format!(">{name}</text>")),
            "legend lacks {name:?}: {hits}"
        );
    }
    assert!(
        !hits.contains(">#1") && !hits.contains(">#2"),
        "lines named by run number: {hits}"
    );
    // Levels 1, 4, 16 on a log-2 axis: the 4 sits halfway between 1 and 16.
    assert!(hits.contains(r#"data-x-scale="Log2""#), "{hits}");
    let ticks: Vec<(String, f64)> = hits
        .split(r#"class="x-tick" x=""#)
        .skip(1)
        .map(|t| {
            let x = t.split('"').next().unwrap().parse().unwrap();
            let label = t.split('>').nth(1).unwrap().split('<').next().unwrap();
            (label.to_string(), x)
        })
        .collect();
    let x_of = |label: &str| ticks.iter().find(|t| t.0 == label).map(|t| t.1).unwrap();
    let (x1, x4, x16) = (x_of("1"), x_of("4"), x_of("16"));
    assert!(
        ((x4 - x1) - (x16 - x4)).abs() < 1.0,
        "ticks at {x1}, {x4}, {x16}"
    );

    // The summary comes first: a row per series with its peak and its ratio to the first row.
    let summary_at = dom.find(r#"id="summary""#).expect("no summary table");
    assert!(
        summary_at < dom.find("<svg").unwrap(),
        "the summary is not first"
    );
    let summary = &dom[summary_at..dom[summary_at..].find("</table>").unwrap() + summary_at];
    assert!(
        summary.contains("Peak hits/s")
            && summary.contains("p99 at peak")
            && summary.contains("Server CPU-µs/req")
    );
    assert_eq!(
        summary.matches("<tr").count(),
        4,
        "a header and three series: {summary}"
    );
    assert!(
        summary.contains("<td>builtin · 2k</td>") && summary.contains("1.00×"),
        "{summary}"
    );
    assert!(dom.contains("whose errors (failed requests + non-2xx answers) stay within 1 %"));

    // The median has its own panel, scaled to it rather than to the p99.
    let (p50, p99) = (
        y_top(chart(&dom, "latency")),
        y_top(chart(&dom, "latency-p99")),
    );
    assert!(
        p50 > 0.0 && p50 <= p99,
        "p50 axis up to {p50} ms, p99 axis up to {p99} ms"
    );
}
