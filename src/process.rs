//! How a quarry process runs: its tokio runtime and how it takes memory
//! from the system. The `quarry` command and the benches start the same.

/// Threads kept for blocking work (file reads and writes of the local
/// store, parsing): tokio's default, 512, let a run of 64 requests in
/// flight grow to some 80 threads, each with its own allocator caches and
/// stack pages that stayed resident.
pub const BLOCKING_THREADS: usize = 8;

/// The multi-threaded runtime quarry runs on. DataFusion plans and
/// optimises recursively; a long protocol's SQL needs more than the
/// default 2 MiB of stack a thread.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    small_pages();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(16 << 20)
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
}

/// Turns transparent huge pages off for this process (once; later calls do
/// nothing). mimalloc, the `quarry` command's allocator, reserves 1 GiB
/// arenas, and where the system allows huge pages (`madvise`, the common
/// setting) each part of an arena a thread touches became a 2 MiB page:
/// the extract bench over 1,000 documents held 755 MiB with them, 418 MiB
/// without, while the live heap was under 100 MiB. A process where they
/// cannot be turned off runs as before.
pub fn small_pages() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(target_os = "linux")]
        let _ = nix::sys::prctl::set_thp_disable(true);
    });
}
