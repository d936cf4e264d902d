//! What the OS says of memory: how much this machine can still give (to
//! size a default table), and how much this process has used at its peak
//! (for a benchmark's or a run's report).

/// Bytes of memory the system can give without swapping (Linux's
/// `MemAvailable`); 4 GiB where that cannot be read, so the defaults are
/// those of a small machine.
pub fn available_memory_bytes() -> u64 {
    const FALLBACK: u64 = 4 << 30;
    let read = || -> Option<u64> {
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = meminfo.lines().find(|line| line.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    };
    read().unwrap_or(FALLBACK)
}

/// Peak resident memory of this process (Linux `VmHWM`), in bytes; `None`
/// where the OS does not tell it.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
