//! CPU affinity, the one helper for the whole program: which CPUs a thread or a process may run on,
//! how many the machine has online, and pinning the calling thread. The spin rule (`spin.rs`) asks
//! it whether a load thread has a CPU of its own; the lab pins servers and the generator with it.

/// The CPUs the calling thread may run on (its affinity mask); empty if the kernel will not say.
pub fn allowed_cpus() -> Vec<usize> {
    allowed_cpus_of(0)
}

/// The CPUs process `pid` may run on (its first thread's mask, which `/proc/PID/status` shows as
/// `Cpus_allowed_list`); empty for a process that is gone or not ours to ask about.
pub fn allowed_cpus_of(pid: i32) -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// CPUs online on the machine (0 if the kernel will not say).
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(0)
}

/// Pins the calling thread (a process's only thread: the process) to `cpus`; CPUs the set cannot
/// name are left out. False when the kernel refused (none of them allowed or online).
pub fn pin_current(cpus: &[usize]) -> bool {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET stays within its bounds for ids below
    // CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_reads_back_its_one_cpu_and_the_process_keeps_its_own() {
        let before = allowed_cpus();
        assert!(!before.is_empty() && before.len() <= online_cpus());
        let last = *before.last().unwrap();
        std::thread::spawn(move || {
            assert!(pin_current(&[last]));
            assert_eq!(allowed_cpus(), vec![last]);
            // This process's first thread (the test harness's) is not moved by it.
            assert_eq!(allowed_cpus_of(std::process::id() as i32), before);
            assert!(!pin_current(&[usize::MAX]), "no CPU it can name: refused");
        })
        .join()
        .unwrap();
        assert_eq!(
            allowed_cpus_of(i32::MAX),
            Vec::<usize>::new(),
            "no such process"
        );
    }
}
