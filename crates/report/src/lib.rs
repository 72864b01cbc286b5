//! Reports: results as text (ab's layout, the seeds' tables, the lab's comparison), JSON, CSV,
//! HdrHistogram's hgrm, and a self-contained HTML page with charts. Pure functions from results to text;
//! no sockets, no database. (Being written under issues 2, 4, 5 and 6.)

pub mod ab; // ab's report layout (issue 2)
pub mod ab_columns; // ab's figures as rows, a column per server (seed 004's table, issue 12)
pub mod ab_files; // ab's -g (gnuplot TSV) and -e (CSV of percentages served) files
pub mod ab_html; // ab's -w report: an HTML table
pub mod chart; // SVG line charts and PNG rendering, for the HTML report
pub mod compare; // the lab's comparison tables, thttpd's layout (issue 5)
pub mod comparison; // a lab comparison's measurements made into the compare tables' rows
pub mod diff; // two runs side by side, metric by metric, with their spread (issue 6)
mod diff_cells; // the medians and number cells of diff's tables
pub mod export; // CSV and HdrHistogram percentile text (issue 6)
pub mod generator; // the generator's side of a run: load threads, how they waited, work and waiting
pub mod h2_table; // HTTP/2 levels' h2load counts as a table (sweep, show, report; issue 11)
pub mod h2load; // h2load's summary lines and JSON for an HTTP/2 run (issue 11)
pub mod history; // the history's listing, the headline a run is quoted by, a run's saved configs
pub mod html; // the self-contained HTML report with SVG charts (issue 6)
pub mod json; // a run as one JSON document (issue 2; reused by export)
pub mod levels; // a measured level and a run of them, as every multi-level report takes them
pub mod notes; // a comparison row's notes (how a server ran a workload) in words
pub mod quic; // QUIC's own figures for an HTTP/3 run: text lines, JSON and CSV fields
mod quic_diff; // diff's QUIC table for a pair of HTTP/3 levels
mod quic_html; // the HTML report's QUIC section for a run of HTTP/3 levels
pub mod robustness; // compare --probe's robustness table (issue 15)
pub mod scale; // compare --scale's connection-scaling table
pub mod seed004; // seed 004's table for a comparison, and the wordpress preset's sweeps
pub mod series; // the HTML report's series: named by server and workload, their peaks, the axis
pub mod summary; // the HTML report's summary table
pub mod tables; // the seeds' sweep tables: Tenon's, WebStone's, the full per-level table (issue 4)
pub mod thresholds_html; // the HTML report's thresholds section: each check held or crossed
pub mod wrk; // wrk's Thread Stats lines and a percentile table finer than ab's whole milliseconds
