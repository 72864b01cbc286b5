//! Thresholds over a run's figures: the `--threshold` language ([`expr`]), each threshold judged
//! against a run's figures ([`check`]), the pass/fail table and the outcome it gives ([`table`]),
//! and the CI outputs ([`ci`]: JUnit XML, a Markdown summary).

pub mod check;
pub mod ci;
pub mod expr;
pub mod table;

pub use check::{check_all, Check};
pub use expr::{parse_all, parse_list, Threshold};
pub use table::{table, verdict, Judged};
