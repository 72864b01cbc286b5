//! CPU pinning: the lab pins each server (and its backends) to the server CPUs and the generator to its own.

/// Pins the calling process (or thread) to `cpus`; CPUs that do not exist are ignored.
pub fn pin_current(cpus: &[usize]) -> bool {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET stays within its bounds for ids below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c, &mut set);
            }
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// The CPUs this process may run on (its affinity mask).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}
