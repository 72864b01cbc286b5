//! The machine a run was measured on, as the history records it with every run.

/// The machine a run was measured on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    pub cpu_model: String,
    pub cores: u32,
    /// `uname -sr`, e.g. "Linux 6.1.0-18-amd64".
    pub kernel: String,
    pub hostname: String,
}

impl Machine {
    /// The machine this process runs on, from /proc (what `uname` and /proc/cpuinfo say).
    pub fn current() -> Machine {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                matches!(k.trim(), "model name" | "Model" | "cpu model")
                    .then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        let kernel = format!(
            "{} {}",
            read("/proc/sys/kernel/ostype"),
            read("/proc/sys/kernel/osrelease")
        )
        .trim()
        .to_string();
        Machine {
            cpu_model,
            cores,
            kernel,
            hostname: read("/proc/sys/kernel/hostname"),
        }
    }
}

/// "Intel(R) Xeon(R) …, 2 cores, Linux 6.1.0-18-amd64, host lab1": how `show` and `diff` name it.
impl std::fmt::Display for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, {} cores, {}, host {}",
            self.cpu_model, self.cores, self.kernel, self.hostname
        )
    }
}
