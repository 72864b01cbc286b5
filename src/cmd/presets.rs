//! The seed experiments `webstand sweep --preset` runs: each preset's client levels, workload, table
//! and its seed's own lengths (`--full`).

use super::sweep_table::Table;
use std::time::Duration;
use webstand_lab::sweep::LevelSpec;
use webstand_report::tables::Layout;
use webstand_results::Stop;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Preset {
    Tenon,
    Webstone1,
    Webstone2,
    ThttpdSmall,
    AbDuel,
    // WordPress through the lab's servers (`super::wordpress`).
    Wordpress,
}

/// What a preset sets unless the command line says otherwise.
pub struct PresetDefaults {
    pub clients: Vec<usize>,
    pub path: &'static str,
    pub filelist: Option<&'static str>,
    pub small_files: bool,
    pub table: Table,
    /// The seed's own length per level (--full).
    pub full: Stop,
    /// Levels with their own lengths, used whatever --full says (ab-duel's two ab runs).
    pub fixed_levels: Option<Vec<LevelSpec>>,
}

/// The WordPress preset's requests per level: seed 004's ab `-n 1000`.
pub const WORDPRESS_REQUESTS: u64 = 1000;

pub fn preset_defaults(p: Preset) -> PresetDefaults {
    let secs = |s| Stop {
        requests: None,
        duration: Some(Duration::from_secs(s)),
    };
    let reqs = |n| Stop {
        requests: Some(n),
        duration: None,
    };
    let d = |clients: Vec<usize>, path, filelist, small_files, table, full| PresetDefaults {
        clients,
        path,
        filelist,
        small_files,
        table,
        full,
        fixed_levels: None,
    };
    match p {
        Preset::Tenon => d(
            vec![1, 2, 4, 8, 16, 32],
            "/2k.html",
            None,
            false,
            Table::Sweep(Layout::Tenon),
            reqs(1_000_000),
        ),
        Preset::Webstone1 => d(
            (1..=8).map(|i| i * 16).collect(),
            "/",
            Some("webstone1"),
            false,
            Table::Sweep(Layout::WebStone),
            secs(300),
        ),
        Preset::Webstone2 => d(
            (1..=20).map(|i| i * 10).collect(),
            "/",
            Some("webstone2"),
            false,
            Table::Sweep(Layout::WebStone),
            secs(600),
        ),
        Preset::ThttpdSmall => d(
            vec![1, 2, 4, 8, 16, 32, 64, 128, 256],
            "/",
            None,
            true,
            Table::Sweep(Layout::Full),
            secs(60),
        ),
        Preset::Wordpress => wordpress_defaults(),
        Preset::AbDuel => PresetDefaults {
            fixed_levels: Some(vec![
                LevelSpec {
                    clients: 5,
                    stop: Stop {
                        requests: Some(100),
                        duration: Some(Duration::from_secs(60)),
                    },
                },
                LevelSpec {
                    clients: 100,
                    stop: Stop {
                        requests: Some(10_000),
                        duration: Some(Duration::from_secs(60)),
                    },
                },
            ]),
            ..d(
                vec![5, 100],
                "/file6k.html",
                None,
                false,
                Table::Ab,
                reqs(10_000),
            )
        },
    }
}

/// What `--preset wordpress` means to a sweep's level defaults.
fn wordpress_defaults() -> PresetDefaults {
    PresetDefaults {
        clients: vec![10, 50, 100],
        path: "/",
        filelist: None,
        small_files: false,
        table: Table::Sweep(Layout::Full),
        full: Stop {
            requests: Some(WORDPRESS_REQUESTS),
            duration: None,
        },
        fixed_levels: None,
    }
}
