//! Where a script's `print` goes: straight to standard output, or (a `--json` run) kept, in order,
//! for the JSON document, or (a sweep's or comparison's `--json`) to standard error.

use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
pub struct Output {
    kept: Option<Arc<Mutex<String>>>,
    stderr: bool,
}

impl Output {
    /// Lines go to standard output as they are printed.
    pub fn stdout() -> Output {
        Output::default()
    }

    /// Lines go to standard error (standard output carries a document of its own).
    pub fn stderr() -> Output {
        Output {
            kept: None,
            stderr: true,
        }
    }

    /// Lines are kept (read with [`Output::take`]).
    pub fn kept() -> Output {
        Output {
            kept: Some(Arc::default()),
            stderr: false,
        }
    }

    pub(crate) fn line(&self, line: &str) {
        match &self.kept {
            Some(k) => {
                let mut k = k.lock().unwrap_or_else(|p| p.into_inner());
                k.push_str(line);
                k.push('\n');
            }
            None if self.stderr => {
                let mut out = std::io::stderr().lock();
                let _ = writeln!(out, "{line}");
            }
            None => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
    }

    /// What was kept so far (empty when lines went to standard output).
    pub fn take(&self) -> String {
        self.kept.as_ref().map_or_else(String::new, |k| {
            std::mem::take(&mut *k.lock().unwrap_or_else(|p| p.into_inner()))
        })
    }
}
