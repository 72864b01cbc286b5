//! A counting global allocator and an in-process `webstand serve`, for the tests that prove the
//! server's hot paths allocate nothing per request (serve_alloc.rs for HTTP/1, serve_h2_alloc.rs
//! for HTTP/2). Included by path, not through `mod common`: it installs the process's allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; the counter only observes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's layout contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as for dealloc; `new_size` is the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations (and reallocations) made by the whole process so far.
pub fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// `webstand serve` on one thread in this process, on a free loopback port, serving a 2 KiB
/// `2k.html` from a new temporary directory (returned: it must outlive the test); its address.
pub fn serve_2k(h2c: bool) -> (tempfile::TempDir, SocketAddr) {
    let (dir, bound) = serve_2k_with(|c, _| c.h2c = h2c);
    (dir, bound[0].addr)
}

/// `serve_2k` with its config adjusted by `adjust` (given the temporary directory) first; every
/// address it bound.
pub fn serve_2k_with(
    adjust: impl FnOnce(&mut webstand_server::Config, &std::path::Path),
) -> (tempfile::TempDir, Vec<webstand_server::Bound>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("2k.html"), "a".repeat(2048)).unwrap();
    let mut config = webstand_server::Config {
        root: dir.path().to_path_buf(),
        listen: Some("127.0.0.1:0".parse().unwrap()),
        threads: 1,
        ..Default::default()
    };
    adjust(&mut config, dir.path());
    let (tx, rx) = mpsc::channel::<Vec<webstand_server::Bound>>();
    // The server thread lives until the test process exits.
    std::thread::spawn(move || {
        webstand_server::run(config, move |a: &[webstand_server::Bound]| {
            tx.send(a.to_vec()).unwrap()
        })
    });
    (dir, rx.recv_timeout(Duration::from_secs(10)).unwrap())
}
