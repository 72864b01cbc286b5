//! What a sweep and a max-users search found: the measured levels, the peak, and the largest clean
//! level. The lab runs them (`webstand_lab::sweep`, `webstand_lab::maxusers`); this is their result.

use crate::figures;
use crate::result::RunResult;

/// One measured level.
#[derive(Clone, Debug)]
pub struct Level {
    pub clients: usize,
    pub result: RunResult,
}

#[derive(Clone, Debug)]
pub struct SweepResult {
    /// The workload's name (the history's group).
    pub workload: String,
    pub levels: Vec<Level>,
    /// Stopped early by Ctrl-C: `levels` holds what completed (the last one possibly partial).
    pub interrupted: bool,
    /// The spec's error threshold, which decides the peak.
    pub max_error_pct: f64,
}

impl Default for SweepResult {
    fn default() -> Self {
        SweepResult {
            workload: String::new(),
            levels: Vec::new(),
            interrupted: false,
            max_error_pct: figures::DEFAULT_MAX_ERROR_PCT,
        }
    }
}

impl SweepResult {
    /// The index of the peak level: the most hits/s among the clean ones (`figures::peak`).
    pub fn peak_index(&self) -> Option<usize> {
        figures::peak(self.levels.iter().map(|l| &l.result), self.max_error_pct)
    }
    /// The peak level, if any level was clean.
    pub fn peak(&self) -> Option<&Level> {
        self.peak_index().map(|i| &self.levels[i])
    }
}

/// One level a max-users search tried, and why it broke if it did.
#[derive(Clone, Debug)]
pub struct Probe {
    pub level: Level,
    /// `None` when clean; else the bound it broke ("error level 3.2 % > 1 %").
    pub broke: Option<String>,
}

/// What a max-users search found.
#[derive(Clone, Debug, Default)]
pub struct MaxUsers {
    /// The largest clean level, with its figures (None: even `start` broke).
    pub best: Option<Level>,
    /// The smallest level that broke (None: nothing broke up to `limit`).
    pub first_broken: Option<usize>,
    /// Every probe in the order run.
    pub probes: Vec<Probe>,
    pub interrupted: bool,
}
