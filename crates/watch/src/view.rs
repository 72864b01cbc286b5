//! `--live` on a terminal: a full-screen view of the run redrawn at each reading (ratatui over
//! crossterm, on the alternate screen, which is left when the view closes so the report prints
//! as usual). The terminal is not put in raw mode: Ctrl-C stays a signal, and stops the run as
//! it does without the view.

use crate::exposition::STATUS_CLASSES;
use crate::reading::Reading;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Paragraph, Sparkline};
use ratatui::{Frame, Terminal};
use std::io::Stdout;

/// The percentiles shown.
const PERCENTILES: [f64; 6] = [50.0, 75.0, 90.0, 99.0, 99.9, 100.0];
/// The latency histogram's bars.
const BARS: usize = 10;

pub struct View {
    term: Terminal<CrosstermBackend<Stdout>>,
    /// The stage last drawn: the first, and each new one, clears the screen, because ratatui
    /// only writes the cells it changed and anything printed since (the report's header before
    /// the first frame, a sweep's lines between levels) would show through the blank ones.
    label: Option<String>,
}

impl View {
    /// Takes over the terminal (the alternate screen, the cursor hidden).
    pub fn open() -> std::io::Result<View> {
        let mut out = std::io::stdout();
        execute!(out, terminal::EnterAlternateScreen, cursor::Hide)?;
        let term = Terminal::new(CrosstermBackend::new(out))?;
        Ok(View { term, label: None })
    }

    pub fn draw(&mut self, r: &Reading) -> std::io::Result<()> {
        if self.label.as_ref() != Some(&r.stage.label) {
            self.label = Some(r.stage.label.clone());
            self.term.clear()?;
        }
        self.term.draw(|f| frame(f, r))?;
        Ok(())
    }
}

impl Drop for View {
    fn drop(&mut self) {
        let _ = execute!(
            self.term.backend_mut(),
            terminal::LeaveAlternateScreen,
            cursor::Show
        );
    }
}

fn frame(f: &mut Frame, r: &Reading) {
    let [title, top, middle, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(9),
        Constraint::Min(8),
        Constraint::Length(4),
    ])
    .areas(f.area());
    f.render_widget(Paragraph::new(title_line(r)), title);
    let [chart, figures] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(top);
    rate_chart(f, chart, r);
    f.render_widget(
        Paragraph::new(figure_lines(r)).block(Block::bordered().title(" Now ")),
        figures,
    );
    let [percentiles, histogram] =
        Layout::horizontal([Constraint::Length(28), Constraint::Min(20)]).areas(middle);
    f.render_widget(
        Paragraph::new(percentile_lines(r)).block(Block::bordered().title(" Latency ")),
        percentiles,
    );
    latency_histogram(f, histogram, r);
    f.render_widget(
        Paragraph::new(status_lines(r)).block(Block::bordered().title(" Status codes and errors ")),
        bottom,
    );
}

fn title_line(r: &Reading) -> String {
    let s = &r.stage;
    let mut t = format!("webstand {}", s.command);
    if let Some((n, of)) = s.level {
        t += &format!(" · level {n}/{of}");
    }
    // A sweep's label names its level's clients already ("8 clients", "warm-up, 8 clients").
    match s.label.as_str() {
        "" => t += &format!(" · {} clients", s.clients),
        label => t += &format!(" · {label}"),
    }
    if let Some(rate) = s.target_rate {
        t += &format!(" · asked {rate:.0} req/s");
    }
    t += &format!(" · {:.1} s", r.elapsed.as_secs_f64());
    if let Some(d) = s.duration {
        t += &format!(" of {} s", d.as_secs());
    }
    if let Some(n) = s.requests {
        t += &format!(" · {} of {n} requests", r.view.complete + r.failed());
    }
    t += "  (Ctrl-C stops and reports)";
    t
}

fn rate_chart(f: &mut Frame, area: Rect, r: &Reading) {
    let width = area.width.saturating_sub(2) as usize;
    let skip = r.history.len().saturating_sub(width);
    let data: Vec<u64> = r.history[skip..].to_vec();
    let peak = data.iter().copied().max().unwrap_or(0);
    let chart = Sparkline::default()
        .block(Block::bordered().title(format!(" Requests/s (peak {peak}) ")))
        .data(&data)
        .style(Style::default().fg(Color::Green));
    f.render_widget(chart, area);
}

fn figure_lines(r: &Reading) -> Vec<Line<'static>> {
    let v = &r.view;
    vec![
        Line::from(format!("Requests/s    {:.0}", r.rate)),
        Line::from(format!("Complete      {}", v.complete)),
        Line::from(format!("Failed        {}", r.failed())),
        Line::from(format!("Received      {:.1} MB", v.bytes as f64 / 1e6)),
        Line::from(format!("Connections   {} open", v.connections_open)),
        Line::from(format!(
            "Generator     {:.0} % busy ({} threads)",
            r.busy * 100.0,
            v.threads
        )),
    ]
}

fn percentile_lines(r: &Reading) -> Vec<Line<'static>> {
    if r.view.latency.is_empty() {
        return vec![Line::from("no response yet")];
    }
    PERCENTILES
        .iter()
        .map(|&p| {
            let name = match p {
                100.0 => "max".to_string(),
                p => format!("p{p}"),
            };
            Line::from(format!("{name:<7} {:>12}", ms(r.latency(p))))
        })
        .collect()
}

fn ms(secs: f64) -> String {
    format!("{:.3} ms", secs * 1e3)
}

/// Bars of equal width in latency from the fastest to the p99.9 response (the slowest few would
/// squeeze every other bar into one).
fn latency_histogram(f: &mut Frame, area: Rect, r: &Reading) {
    let h = &r.view.latency;
    let block = Block::bordered().title(" Latency histogram ");
    if h.is_empty() {
        f.render_widget(block, area);
        return;
    }
    let (lo, hi) = (h.min(), h.value_at_percentile(99.9).max(h.min() + 1));
    let step = (hi - lo).div_ceil(BARS as u64).max(1);
    let bars: Vec<Bar> = (0..BARS as u64)
        .map(|i| {
            let (from, to) = (lo + i * step, lo + (i + 1) * step - 1);
            let n = h.count_between(from, to);
            Bar::default()
                .value(n)
                .label(Line::from(ms(to as f64 / 1e6)))
                .text_value(n.to_string())
        })
        .collect();
    let chart = BarChart::default()
        .block(block)
        .direction(ratatui::layout::Direction::Horizontal)
        .bar_width(1)
        .bar_gap(0)
        .bar_style(Style::default().fg(Color::Yellow))
        .data(BarGroup::default().bars(&bars));
    f.render_widget(chart, area);
}

fn status_lines(r: &Reading) -> Vec<Line<'static>> {
    let v = &r.view;
    let statuses: Vec<String> = STATUS_CLASSES
        .iter()
        .zip(v.statuses)
        .filter(|&(c, n)| n > 0 || *c == "2xx")
        .map(|(c, n)| format!("{c}: {n}"))
        .collect();
    let f = &v.failed;
    vec![
        Line::from(format!("Status   {}", statuses.join("   "))),
        Line::from(format!(
            "Errors   connect: {}   receive: {}   length: {}   exceptions: {}",
            f.connect, f.receive, f.length, f.exceptions
        )),
    ]
}
