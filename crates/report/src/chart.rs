//! SVG line charts drawn here (no plotting library, no scripts): axes with round ticks on a linear,
//! log-2 (client counts that double) or percentile scale, one polyline per series, a marker with a
//! tooltip per point (hollow and red-rimmed where the level was mostly errors; with a bar from the
//! lowest to the highest round where it is a median of rounds), and a legend. Plus
//! PNG rendering of a chart with resvg.

use anyhow::Context;
use std::fmt::Write;

pub const WIDTH: f64 = 760.0;
pub const HEIGHT: f64 = 420.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 210.0; // room for the legend
/// The longest legend label that fits in [`RIGHT`].
const LEGEND_CHARS: usize = 23;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 56.0;
pub const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";
/// Colour-blind-friendly palette (Okabe–Ito, then a few more).
pub const COLOURS: &[&str] = &[
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999933",
    "#882255", "#44AA99",
];
/// The rim of a point whose level was mostly errors.
const BAD: &str = "#CC0000";
/// The percentile axis ends at 1/(1-p) = 10^6, i.e. 99.9999 %.
pub const PERCENTILE_AXIS_MAX: f64 = 1e6;

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Scale {
    Linear,
    /// Log base 2 with power-of-two ticks (client counts that double).
    Log2,
    /// The percentile axis: log10 of 1/(1-p), ticks labelled 0 %, 90 %, 99 % …
    Percentile,
}

#[derive(Clone, Copy, PartialEq)]
pub enum Dash {
    Solid,
    Dashed,
}

pub struct Line {
    pub label: String,
    pub colour: &'static str,
    pub dash: Dash,
    /// Draw a marker per point (levels), or not (dense distributions).
    pub markers: bool,
    pub points: Vec<(f64, f64)>,
    /// Tooltip per point.
    pub tips: Vec<String>,
    /// Per point: the level was mostly errors (drawn hollow with a red rim).
    pub bad: Vec<bool>,
    /// Per point, where it is the median of several rounds: the lowest and highest round's
    /// figure, drawn as a bar through the point.
    pub ranges: Vec<Option<(f64, f64)>>,
}

pub struct Chart {
    pub name: String,
    pub title: String,
    pub note: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub lines: Vec<Line>,
}

/// Escapes text for HTML and SVG, content and quoted attributes alike: the one HTML escaper of
/// webstand (the server's listings use it too).
pub use html_escape::encode_quoted_attribute as escape;

/// "Nice" linear ticks (1, 2, 5 × 10^k) covering 0..=max.
pub fn linear_ticks(max: f64) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| raw <= *s)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

pub fn format_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if v.abs() >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub fn percentile_label(x: f64) -> String {
    // x = 1/(1-p): 1 → 0 %, 10 → 90 %, 100 → 99 % …
    let p = 100.0 * (1.0 - 1.0 / x);
    let decimals = (x.log10().round() as usize).saturating_sub(2);
    format!("{p:.decimals$}%")
}

/// Where the data goes on the page: the x axis's ticks and range (in scale units), the y axis's.
struct Frame {
    scale: Scale,
    x_ticks: Vec<(f64, String)>,
    x_lo: f64,
    x_hi: f64,
    y_ticks: Vec<f64>,
    y_top: f64,
}

impl Frame {
    fn of(chart: &Chart) -> Frame {
        let points = chart.lines.iter().flat_map(|l| l.points.iter());
        let (mut x_min, mut x_max, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY, 0f64);
        for &(x, y) in points {
            x_min = x_min.min(x);
            x_max = x_max.max(x);
            y_max = y_max.max(y);
        }
        let range_tops = chart.lines.iter().flat_map(|l| l.ranges.iter().flatten());
        y_max = range_tops.fold(y_max, |m, &(_, hi)| m.max(hi));
        if !x_min.is_finite() {
            (x_min, x_max) = (1.0, 2.0);
        }
        let y_ticks = linear_ticks(y_max);
        let y_top = *y_ticks.last().unwrap_or(&1.0);
        let (x_ticks, x_lo, x_hi) = x_axis(chart.x_scale, x_min, x_max);
        Frame {
            scale: chart.x_scale,
            x_ticks,
            x_lo,
            x_hi,
            y_ticks,
            y_top,
        }
    }
    fn x(&self, x: f64) -> f64 {
        let u = match self.scale {
            Scale::Linear => x,
            Scale::Log2 => x.max(1e-9).log2(),
            Scale::Percentile => x.max(1.0).log10(),
        };
        LEFT + (u - self.x_lo) / (self.x_hi - self.x_lo).max(1e-12) * plot_w()
    }
    fn y(&self, y: f64) -> f64 {
        TOP + plot_h() - y / self.y_top.max(1e-12) * plot_h()
    }
}

fn plot_w() -> f64 {
    WIDTH - LEFT - RIGHT
}
fn plot_h() -> f64 {
    HEIGHT - TOP - BOTTOM
}

/// The x axis's ticks and its range in scale units.
fn x_axis(scale: Scale, x_min: f64, x_max: f64) -> (Vec<(f64, String)>, f64, f64) {
    match scale {
        Scale::Linear => {
            let t = linear_ticks(x_max);
            let hi = *t.last().unwrap_or(&1.0);
            (
                t.into_iter().map(|v| (v, format_tick(v))).collect(),
                0.0,
                hi,
            )
        }
        Scale::Log2 => {
            let lo = x_min.max(1.0).log2().floor();
            let hi = x_max.max(2.0).log2().ceil().max(lo + 1.0);
            let every = ((hi - lo) / 10.0).ceil().max(1.0) as usize;
            let t = (lo as i64..=hi as i64)
                .step_by(every)
                .map(|e| (2f64.powi(e as i32), format_tick(2f64.powi(e as i32))))
                .collect();
            (t, lo, hi)
        }
        Scale::Percentile => {
            let hi = x_max.clamp(10.0, PERCENTILE_AXIS_MAX).log10().ceil();
            let t = (0..=hi as i32)
                .map(|e| (10f64.powi(e), percentile_label(10f64.powi(e))))
                .collect();
            (t, 0.0, hi)
        }
    }
}

impl Chart {
    pub fn render(&self) -> String {
        let f = Frame::of(self);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{name}" data-x-scale="{scale:?}" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" font-size="12">"#,
            name = self.name,
            scale = self.x_scale
        );
        let _ = write!(
            s,
            r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
        );
        let _ = write!(
            s,
            r#"<text x="{LEFT}" y="20" font-size="15" font-weight="bold">{}</text>"#,
            escape(&self.title)
        );
        if !self.note.is_empty() {
            let _ = write!(
                s,
                r##"<text x="{LEFT}" y="36" font-size="11" fill="#555555">{}</text>"##,
                escape(&self.note)
            );
        }
        self.axes(&mut s, &f);
        for line in &self.lines {
            draw_line(&mut s, &f, line);
        }
        self.legend(&mut s);
        s.push_str("</svg>");
        s
    }

    /// Grid, tick labels, frame and axis titles.
    fn axes(&self, s: &mut String, f: &Frame) {
        for &v in &f.y_ticks {
            let y = f.y(v);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/>"##,
                LEFT + plot_w()
            );
            let _ = write!(
                s,
                r#"<text class="y-tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 6.0,
                y + 4.0,
                format_tick(v)
            );
        }
        for (v, label) in &f.x_ticks {
            let x = f.x(*v);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/>"##,
                TOP + plot_h()
            );
            let _ = write!(
                s,
                r#"<text class="x-tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                TOP + plot_h() + 16.0,
                escape(label)
            );
        }
        let (w, h) = (plot_w(), plot_h());
        let _ = write!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}" fill="none" stroke="#888888"/>"##
        );
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + w / 2.0,
            HEIGHT - 14.0,
            escape(&self.x_label)
        );
        let mid = TOP + h / 2.0;
        let _ = write!(
            s,
            r#"<text x="16" y="{mid:.1}" text-anchor="middle" transform="rotate(-90 16 {mid:.1})">{}</text>"#,
            escape(&self.y_label)
        );
    }

    /// One entry per line with a distinct label.
    fn legend(&self, s: &mut String) {
        let mut y = TOP + 8.0;
        let lx = LEFT + plot_w() + 14.0;
        let mut seen: Vec<&str> = Vec::new();
        for line in &self.lines {
            if seen.contains(&line.label.as_str()) {
                continue;
            }
            seen.push(&line.label);
            let _ = write!(
                s,
                r#"<line x1="{lx}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="2"{}/>"#,
                lx + 22.0,
                line.colour,
                dash_attr(line.dash)
            );
            // The legend's column holds 23 characters at 12 px: a longer label is shortened
            // (its <title> keeps it whole) rather than cut at the chart's edge.
            let label = if line.label.chars().count() > LEGEND_CHARS {
                let kept: String = line.label.chars().take(LEGEND_CHARS - 1).collect();
                format!("{kept}…")
            } else {
                line.label.clone()
            };
            let _ = write!(
                s,
                r#"<text class="legend" x="{}" y="{}"><title>{}</title>{}</text>"#,
                lx + 28.0,
                y + 4.0,
                escape(&line.label),
                escape(&label)
            );
            y += 18.0;
        }
    }
}

fn dash_attr(d: Dash) -> &'static str {
    match d {
        Dash::Dashed => r#" stroke-dasharray="6 4""#,
        Dash::Solid => "",
    }
}

/// A series' polyline and its markers with tooltips.
fn draw_line(s: &mut String, f: &Frame, line: &Line) {
    let pts: Vec<String> = line
        .points
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", f.x(x), f.y(y)))
        .collect();
    if pts.len() > 1 {
        let _ = write!(
            s,
            r#"<polyline class="series" fill="none" stroke="{}" stroke-width="2"{} points="{}"/>"#,
            line.colour,
            dash_attr(line.dash),
            pts.join(" ")
        );
    }
    for (&(x, _), range) in line.points.iter().zip(&line.ranges) {
        if let Some((lo, hi)) = range {
            let (x, lo, hi) = (f.x(x), f.y(*lo), f.y(*hi));
            let _ = write!(
                s,
                r#"<path class="round-range" stroke="{}" stroke-width="1.5" d="M{x:.1},{lo:.1}V{hi:.1}M{:.1},{lo:.1}h8M{:.1},{hi:.1}h8"/>"#,
                line.colour,
                x - 4.0,
                x - 4.0
            );
        }
    }
    if !(line.markers || line.points.len() == 1) {
        return;
    }
    for (i, &(x, y)) in line.points.iter().enumerate() {
        let tip = line.tips.get(i).map(String::as_str).unwrap_or("");
        let (x, y) = (f.x(x), f.y(y));
        if line.bad.get(i).copied().unwrap_or(false) {
            let _ = write!(
                s,
                r##"<circle class="mostly-errors" cx="{x:.1}" cy="{y:.1}" r="5" fill="#ffffff" stroke="{BAD}" stroke-width="2.5"><title>{}</title></circle>"##,
                escape(tip)
            );
        } else {
            let _ = write!(
                s,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{}"><title>{}</title></circle>"#,
                line.colour,
                escape(tip)
            );
        }
    }
}

/// Renders one chart's SVG to PNG (with the system's fonts for the labels).
pub fn png(svg: &str) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = usvg::Tree::from_str(svg, &opt).context("parsing a chart's SVG")?;
    let size = tree.size().to_int_size();
    // Twice the SVG size: crisp in a README on high-density screens.
    let mut pixmap = tiny_skia::Pixmap::new(size.width() * 2, size.height() * 2)
        .context("allocating the PNG")?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(2.0, 2.0),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().context("encoding the PNG")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        assert_eq!(linear_ticks(9.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(linear_ticks(730.0).last(), Some(&800.0));
        assert_eq!(percentile_label(1.0), "0%");
        assert_eq!(percentile_label(100.0), "99%");
        assert_eq!(percentile_label(10_000.0), "99.99%");
        assert_eq!(format_tick(25_000.0), "25k");
        let (t, lo, hi) = x_axis(Scale::Log2, 1.0, 16.0);
        let labels: Vec<&str> = t.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!((labels, lo, hi), (vec!["1", "2", "4", "8", "16"], 0.0, 4.0));
    }

    #[test]
    fn a_mostly_errors_point_is_hollow_and_says_so() {
        let chart = Chart {
            name: "t".into(),
            title: "t".into(),
            note: String::new(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_scale: Scale::Log2,
            lines: vec![Line {
                label: "a".into(),
                colour: COLOURS[0],
                dash: Dash::Solid,
                markers: true,
                points: vec![(1.0, 5.0), (4.0, 9.0)],
                tips: vec!["ok".into(), "MOSTLY ERRORS".into()],
                bad: vec![false, true],
                ranges: Vec::new(),
            }],
        };
        let svg = chart.render();
        assert_eq!(svg.matches("class=\"mostly-errors\"").count(), 1);
        assert!(svg.contains("<title>MOSTLY ERRORS</title></circle>"));
        // Log 2: 1 at the left edge, 4 at the right (ticks 1, 2, 4).
        assert!(
            svg.contains(r#"cx="78.0""#) && svg.contains(r#"cx="550.0""#),
            "{svg}"
        );
    }

    #[test]
    fn a_long_legend_label_stays_inside_the_chart() {
        // The latency-by-percentile chart's label: a series' name and its peak's clients.
        let label = "#8 webstand · /2k.html @16 and more";
        let chart = Chart {
            name: "t".into(),
            title: "t".into(),
            note: String::new(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_scale: Scale::Linear,
            lines: vec![Line {
                label: label.into(),
                colour: "#000000",
                dash: Dash::Solid,
                markers: false,
                points: vec![(1.0, 5.0), (4.0, 9.0)],
                tips: vec![String::new(); 2],
                bad: vec![false; 2],
                ranges: Vec::new(),
            }],
        };
        let svg = chart.render();
        assert!(svg.contains(&format!("<title>{label}</title>")), "{svg}");
        // Rendered with the system's fonts: the rightmost 4 px (8 in the PNG) stay blank.
        let png = png(&svg).unwrap();
        let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
        let (w, h) = (pixmap.width(), pixmap.height());
        let inked = (0..h)
            .flat_map(|y| (w - 8..w).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                pixmap
                    .pixel(x, y)
                    .is_some_and(|p| p.alpha() > 0 && p.red() < 128)
            })
            .count();
        assert_eq!(inked, 0, "legend text reaches the chart's right edge");
    }
}
