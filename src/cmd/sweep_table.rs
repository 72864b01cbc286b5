//! `sweep --table`: which layout a sweep's levels are printed in.

use webstand_report::tables::Layout;

/// `--table`: one of the seeds' sweep layouts, or ab's report per level (seed 001's comparison).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Sweep(Layout),
    Ab,
}

impl std::str::FromStr for Table {
    type Err = String;
    fn from_str(s: &str) -> Result<Table, String> {
        match s {
            "ab" => Ok(Table::Ab),
            _ => s
                .parse()
                .map(Table::Sweep)
                .map_err(|_| format!("unknown table {s:?}: expected full, tenon, webstone or ab")),
        }
    }
}
