//! Where a script's `print` goes: straight to standard output, or (a `--json` run) kept, in order,
//! for the JSON document.

use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
pub struct Output {
    kept: Option<Arc<Mutex<String>>>,
}

impl Output {
    /// Lines go to standard output as they are printed.
    pub fn stdout() -> Output {
        Output { kept: None }
    }

    /// Lines are kept (read with [`Output::take`]).
    pub fn kept() -> Output {
        Output {
            kept: Some(Arc::default()),
        }
    }

    pub(crate) fn line(&self, line: &str) {
        match &self.kept {
            Some(k) => {
                let mut k = k.lock().unwrap_or_else(|p| p.into_inner());
                k.push_str(line);
                k.push('\n');
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
