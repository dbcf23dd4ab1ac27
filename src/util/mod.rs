//! The ground floor: small helpers every layer may use. Nothing here
//! imports anything else from the crate.

pub mod data;
pub mod handoff;
pub mod seed;

/// The cores this process may use (1 when the system cannot tell): the
/// default for every "one per core" setting.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A "threads" setting resolved: 0 means one per core (every scenario and
/// bench key of that kind reads so), any other number is taken as given.
pub fn threads_or_cores(n: u32) -> usize {
    match n {
        0 => cores(),
        n => n as usize,
    }
}

/// CPU seconds this process has used so far, all threads together: what a
/// rate "per CPU-second" divides by, whatever else the machine runs.
pub fn cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into `t`.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } != 0 {
        return 0.0;
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// The median of `v` (sorted in place); NaN when empty. Benchmarks quote
/// medians because this machine is noisy.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Writes `bytes` to `path` so that readers (or a kill mid-write) see the
/// old content or the new, never a mix: a temporary file beside it (named
/// with this process's id, so two writers do not share one), synced, then
/// renamed over it. Creates the parent directory when missing. Tournament
/// state and reports, training metrics, resolved scenarios and the solver's
/// book all save through it.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let tmp = path.with_extension(format!("{ext}.{}.tmp", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_whole_files_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub").join("a.json");
        write_atomic(&p, b"first, longer").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn zero_threads_means_every_core() {
        assert_eq!(threads_or_cores(0), cores());
        assert_eq!(threads_or_cores(3), 3);
    }
}
