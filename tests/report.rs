//! `webstand report`: the HTML page with charts, loaded in headless Chromium (it renders every chart,
//! with no console errors), the per-chart SVG and PNG files, and bad input. The runs are written to a
//! temporary history through the store's API (three servers over seven client levels, and a bench
//! run), so these tests need no server; tests/history.rs covers runs measured over loopback.

use crate::common;

use common::{require, run, stderr, stdout};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use webstand_results::RunResult;
use webstand_store::{RunMeta, Store};

/// A level of a server that handles `per_client` hits/s per client up to `cap`, with latencies that
/// grow with the load, and some failures past `breaks_at` clients.
fn level(clients: usize, per_client: f64, cap: f64, breaks_at: usize) -> RunResult {
    let hits = (per_client * clients as f64).min(cap);
    let complete = hits as u64;
    let mut r = RunResult {
        elapsed: Duration::from_secs(1),
        complete,
        connections: complete,
        ..Default::default()
    };
    r.total_bytes = complete * 1250;
    r.body_bytes = complete * 1024;
    if clients > breaks_at {
        r.failed.connect = (clients - breaks_at) as u64 * 3;
    }
    let base_us = (clients as f64 * 1e6 / hits.max(1.0)) as u64;
    for i in 0..complete {
        // A long tail: every 100th request is 10× slower.
        let v = if i % 100 == 99 {
            base_us * 10
        } else {
            base_us / 2 + base_us * (i % 100) / 100
        };
        r.histograms.total.record(v.max(1)).unwrap();
        r.histograms.connect.record(40).unwrap();
        r.histograms.waiting.record((v / 2).max(1)).unwrap();
        r.histograms.processing.record(v.max(1)).unwrap();
        r.latency_sum_us += v as u128;
    }
    r
}

/// Writes a comparison run (id 1) and a bench run (id 2) into a new history at `db`.
fn history_with_runs(db: &Path) {
    let store = Store::open(Some(db)).unwrap();
    let meta = RunMeta {
        kind: "compare".into(),
        command_line: "webstand compare --servers nginx,webstand,lighttpd".into(),
        target: "lab".into(),
    };
    let id = store.begin_run(&meta).unwrap();
    for (server, per_client, cap, breaks_at) in [
        ("nginx/small", 900.0, 9000.0, 1000),
        ("webstand/small", 1000.0, 12000.0, 1000),
        ("lighttpd/small", 5.0, 700.0, 32),
    ] {
        for clients in [1, 2, 4, 8, 16, 32, 64] {
            store
                .add_level(
                    id,
                    server,
                    clients,
                    1,
                    Some(server.split('/').next().unwrap()),
                    &level(clients, per_client, cap, breaks_at),
                )
                .unwrap();
        }
    }
    store.finish_run(id, "complete").unwrap();
    let bench = store
        .begin_run(&RunMeta {
            kind: "bench".into(),
            command_line: "webstand bench -n 1000 -c 10 http://127.0.0.1:1/".into(),
            target: "http://127.0.0.1:1/".into(),
        })
        .unwrap();
    store
        .add_level(bench, "", 10, 1, None, &level(10, 300.0, 3000.0, 1000))
        .unwrap();
    store.finish_run(bench, "complete").unwrap();
}

/// Headless Chromium on a local file: (its stdout, its stderr log).
fn chromium(extra: &[&str], page: &Path) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(require("chromium"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
        ])
        .args([
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .output()
        .expect("run chromium");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Lines where the page logged to its console or threw.
fn console_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

#[test]
fn the_report_renders_every_chart_in_chromium_without_console_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    history_with_runs(&db);
    let page = dir.path().join("report.html");
    let (svg_dir, png_dir) = (dir.path().join("svg"), dir.path().join("png"));
    let db_s = db.to_str().unwrap();
    let o = run(&[
        "report",
        "--db",
        db_s,
        "1",
        "2",
        "-o",
        page.to_str().unwrap(),
        "--svg",
        svg_dir.to_str().unwrap(),
        "--png",
        png_dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    let html = std::fs::read_to_string(&page).unwrap();
    for fetch in [
        "src=",
        "href=",
        "url(",
        "@import",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(
            !html.contains(fetch),
            "the page must fetch nothing, found {fetch:?}"
        );
    }

    let (dom, log) = chromium(&["--dump-dom"], &page);
    assert!(
        dom.contains(r#"data-rendered="yes""#),
        "the page's script did not run:\n{log}"
    );
    assert!(
        dom.contains(r#"data-charts="6""#),
        "expected 6 charts in the rendered DOM"
    );
    for chart in [
        "hits",
        "latency",
        "latency-p99",
        "errors",
        "kbytes",
        "distribution",
    ] {
        assert!(
            dom.contains(&format!(r#"data-chart="{chart}""#)),
            "chart {chart} missing from the DOM"
        );
    }
    // The hits/s chart: one line per server, plus the bench run's single point.
    let hits = dom
        .split(r#"data-chart="hits""#)
        .nth(1)
        .unwrap()
        .split("</svg>")
        .next()
        .unwrap();
    assert_eq!(hits.matches("<polyline").count(), 3, "one line per server");
    assert_eq!(hits.matches("<circle").count(), 3 * 7 + 1);
    assert!(
        hits.contains("nginx · small")
            && hits.contains("lighttpd · small")
            && hits.contains("#2 · /"),
        "legend names every series by server and workload: {hits}"
    );
    // The tables beneath.
    assert!(
        dom.contains("Run 1: compare of lab")
            && dom.contains("Run 2: bench of http://127.0.0.1:1/")
    );
    assert!(
        dom.contains("Hits/s") && dom.contains("Peak:"),
        "the seed-style tables are on the page"
    );
    assert!(
        dom.contains("peak hits/s"),
        "the comparison's per-workload table is on the page"
    );
    assert!(
        dom.contains("Requests per second:"),
        "the bench run in ab's layout is on the page"
    );
    let console = console_lines(&log);
    assert!(console.is_empty(), "console messages: {console:?}");

    // The detector itself sees a page's console errors (so the check above can fail).
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<html><body><script>throw new Error('boom')</script></body></html>",
    )
    .unwrap();
    let (_, bad_log) = chromium(&["--dump-dom"], &bad);
    assert!(
        console_lines(&bad_log).iter().any(|l| l.contains("boom")),
        "{bad_log}"
    );

    // A screenshot of the page (kept beside the report; look at it with an image viewer).
    let shot = dir.path().join("shot.png");
    chromium(
        &[
            "--window-size=1600,2200",
            &format!("--screenshot={}", shot.display()),
        ],
        &page,
    );
    assert!(
        std::fs::metadata(&shot)
            .map(|m| m.len() > 50_000)
            .unwrap_or(false),
        "screenshot missing or blank"
    );
    // WEBSTAND_KEEP_REPORT=DIR keeps the page, its screenshot and charts for a person to look at.
    if let Some(keep) = std::env::var_os("WEBSTAND_KEEP_REPORT") {
        let keep = Path::new(&keep);
        std::fs::create_dir_all(keep).unwrap();
        for f in ["report.html", "shot.png"] {
            std::fs::copy(dir.path().join(f), keep.join(f)).unwrap();
        }
    }

    // Each chart alone, as SVG and PNG.
    for chart in [
        "hits",
        "latency",
        "latency-p99",
        "errors",
        "kbytes",
        "distribution",
    ] {
        let svg = std::fs::read_to_string(svg_dir.join(format!("{chart}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.ends_with("</svg>"),
            "{chart}.svg"
        );
        let png = std::fs::read(png_dir.join(format!("{chart}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{chart}.png");
        assert!(
            png.len() > 10_000,
            "{chart}.png looks blank ({} bytes)",
            png.len()
        );
    }
}

/// What a script added to a copy of the page measured in Chromium at `width` CSS pixels: every
/// element past the right edge or with text overflowing its own box, how much of the charts' row
/// the charts span, and the first chart's width.
struct Layout {
    problems: String,
    charts_span: f64,
    chart_width: f64,
    viewport: f64,
}

fn layout_at(page: &Path, width: u32) -> Layout {
    let measuring = page.with_file_name(format!("measured-{width}.html"));
    let script = r#"<script>
(function () {
  const vw = document.documentElement.clientWidth;
  const problems = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > vw + 0.5) problems.push('past the right edge: ' + el.tagName + ' ' + el.className.baseVal + el.className);
    if (getComputedStyle(el).overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1) problems.push('text beyond its box: ' + el.tagName + ' ' + el.scrollWidth + ' > ' + el.clientWidth);
  }
  if (document.documentElement.scrollWidth > vw) problems.push('the page scrolls sideways');
  const charts = document.querySelector('.charts').getBoundingClientRect();
  const figs = [...document.querySelectorAll('.charts figure')].map(f => f.getBoundingClientRect());
  const span = Math.max(...figs.map(f => f.right)) - Math.min(...figs.map(f => f.left));
  document.body.setAttribute('data-viewport', String(vw));
  document.body.setAttribute('data-charts-span', String(span / charts.width));
  document.body.setAttribute('data-chart-width', String(figs[0].width));
  document.body.setAttribute('data-layout-problems', problems.join(' / ') || 'none');
})();
</script></body>"#;
    let html = std::fs::read_to_string(page)
        .unwrap()
        .replace("</body>", script);
    std::fs::write(&measuring, html).unwrap();
    let (dom, log) = chromium(
        &["--dump-dom", &format!("--window-size={width},2000")],
        &measuring,
    );
    let attr = |name: &str| {
        let at = dom
            .find(&format!("{name}=\""))
            .unwrap_or_else(|| panic!("the measuring script did not run: {log}"));
        dom[at + name.len() + 2..]
            .split('"')
            .next()
            .unwrap()
            .to_string()
    };
    let number = |name: &str| attr(name).parse::<f64>().unwrap();
    Layout {
        problems: attr("data-layout-problems"),
        charts_span: number("data-charts-span"),
        chart_width: number("data-chart-width"),
        viewport: number("data-viewport"),
    }
}

#[test]
fn the_report_uses_the_page_width_and_cuts_no_text_at_1280_and_800_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    history_with_runs(&db);
    // A diagnosis as long as real ones are, on every level of the comparison.
    let store = Store::open(Some(&db)).unwrap();
    let finding = serde_json::json!({
        "limit": "generator",
        "evidence": "the busiest of 1 load threads ran 49 % of the run and waited 50 % for CPU 1, which another program was using",
        "advice": "latencies and rates include that wait: keep other programs off the generator's CPU, or pin it to a free one (taskset)",
    });
    let diagnosis = serde_json::json!({ "verdict": "generator", "findings": [finding] });
    for group in ["nginx/small", "webstand/small", "lighttpd/small"] {
        for clients in [1, 2, 4, 8, 16, 32, 64] {
            store.add_diagnosis(1, group, clients, &diagnosis).unwrap();
        }
    }
    drop(store);
    let page = dir.path().join("report.html");
    let o = run(&[
        "report",
        "--db",
        db.to_str().unwrap(),
        "1",
        "2",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    // Read as words without the markup: the Diagnosis comes in lines, each a block of its own.
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("pin it to a free one (taskset)"),
        "the diagnosis is on the page"
    );
    // The comparison was measured in one round: its ratios carry the README's warning.
    assert!(
        html.contains("Measured once") && html.contains("webstand compare --rounds 3"),
        "no warning on a one-round comparison"
    );

    for width in [1280, 800] {
        let l = layout_at(&page, width);
        assert!(
            l.viewport > width as f64 - 40.0,
            "the window was not {width} px wide: {}",
            l.viewport
        );
        assert_eq!(l.problems, "none", "at {width} px");
        assert!(
            l.charts_span > 0.98,
            "at {width} px the charts span {:.0} % of their row",
            l.charts_span * 100.0
        );
        // At 1280 px two charts share a row; at 800 px one takes it whole.
        let columns = if width >= 1280 { 2.0 } else { 1.0 };
        assert!(
            l.chart_width > l.viewport / columns - 60.0,
            "at {width} px a chart is {} px wide",
            l.chart_width
        );
    }
}

#[test]
fn each_diagnosis_sentence_is_one_element_of_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    history_with_runs(&db);
    // A finding longer than a terminal's 120 columns, on the bench run and on a comparison level:
    // the page gets it whole (the terminal wraps it where it prints it), one block for the sentence.
    let evidence = "the busiest of 1 load threads ran 49 % of the run and waited 50 % for CPU 1, \
                    which another program was using";
    let advice = "latencies and rates include that wait: keep other programs off the generator's \
                  CPU, or pin it to a free one (taskset)";
    let finding =
        serde_json::json!({ "limit": "generator", "evidence": evidence, "advice": advice });
    let diagnosis = serde_json::json!({ "verdict": "generator", "findings": [finding] });
    let store = Store::open(Some(&db)).unwrap();
    store
        .add_diagnosis(1, "nginx/small", 8, &diagnosis)
        .unwrap();
    store.add_diagnosis(2, "", 10, &diagnosis).unwrap();
    drop(store);
    // As the page escapes it.
    let sentence = format!("- {evidence}: {advice}").replace('\'', "&#x27;");
    assert!(sentence.len() > 120);
    for id in ["1", "2"] {
        let page = dir.path().join(format!("report-{id}.html"));
        let o = run(&[
            "report",
            "--db",
            db.to_str().unwrap(),
            id,
            "-o",
            page.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let html = std::fs::read_to_string(&page).unwrap();
        let blocks: Vec<&str> = html
            .lines()
            .filter(|l| l.contains("load threads ran") || l.contains("(taskset)"))
            .collect();
        assert_eq!(
            blocks.len(),
            1,
            "run {id}: the sentence in pieces: {blocks:#?}"
        );
        let block = blocks[0];
        assert!(
            block.starts_with("<div style=") && block.ends_with(&format!(">{sentence}</div>")),
            "run {id}: not one element holding the sentence: {block}"
        );
    }
}

#[test]
fn bad_report_input_is_one_clear_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    history_with_runs(&db);
    let db_s = db.to_str().unwrap();
    let page = dir.path().join("r.html");

    let o = run(&[
        "report",
        "--db",
        db_s,
        "1",
        "77",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("no run 77"), "{}", stderr(&o));
    assert!(!page.exists());

    let o = run(&[
        "report",
        "--db",
        db_s,
        "1",
        "-o",
        dir.path().join("no/such/dir/r.html").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("webstand: error: cannot write") && stderr(&o).lines().count() == 1,
        "{}",
        stderr(&o)
    );

    let o = run(&[
        "report",
        "--db",
        dir.path().join("missing.db").to_str().unwrap(),
        "1",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no history database"), "{}", stderr(&o));
    assert!(
        !dir.path().join("missing.db").exists(),
        "a reader must not create the database"
    );
    assert!(stdout(&o).is_empty());
}
