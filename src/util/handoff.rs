//! Helper threads that each run one borrowed job at a time while the caller
//! runs its own part, waiting by spinning rather than sleeping.
//!
//! Why not rayon: a batched env's step is a few tens of microseconds of work
//! handed over tens of thousands of times a second. A thread pool puts its
//! idle workers and the waiting caller to sleep on a futex, and on the
//! virtual machines we measured one wake-up cost more than the whole step
//! (1,024 envs: 42 µs on one thread, 96 µs split over two with rayon). Here
//! a helper spins for [`SPIN`] after each job before it parks, and the caller
//! spins while it waits, so back-to-back steps never touch the scheduler.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle helper spins for its next job before it parks.
pub const SPIN: Duration = Duration::from_micros(500);

const IDLE: u8 = 0;
const READY: u8 = 1;
const DONE: u8 = 2;
const PANICKED: u8 = 3;
const STOP: u8 = 4;

/// A job with its borrow's lifetime erased (see [`Helpers::run`]'s safety).
type Job = *mut (dyn FnMut() + Send + 'static);

struct Shared {
    state: AtomicU8,
    parked: AtomicBool,
    job: UnsafeCell<Option<Job>>,
}

// SAFETY: `job` is written by the caller only while the state is IDLE and
// read by the helper only after it saw READY (SeqCst on both sides), so the
// two never touch it at once; the job itself is `Send`.
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

struct Helper {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// `n` helper threads; [`Helpers::run`] hands each a job and runs the
/// caller's own part meanwhile.
pub struct Helpers {
    helpers: Vec<Helper>,
}

impl Helpers {
    pub fn new(n: usize) -> std::io::Result<Helpers> {
        let mut helpers = Vec::with_capacity(n);
        for i in 0..n {
            let shared = Arc::new(Shared {
                state: AtomicU8::new(IDLE),
                parked: AtomicBool::new(false),
                job: UnsafeCell::new(None),
            });
            let s = shared.clone();
            let thread = std::thread::Builder::new()
                .name(format!("c4sim-helper-{i}"))
                .spawn(move || helper_loop(&s))?;
            helpers.push(Helper {
                shared,
                thread: Some(thread),
            });
        }
        Ok(Helpers { helpers })
    }

    /// How many helper threads there are.
    pub fn len(&self) -> usize {
        self.helpers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.helpers.is_empty()
    }

    /// Runs `jobs[i]` on helper `i` and `mine` on this thread, and returns
    /// `mine`'s result once every job has finished. A panic in a job is
    /// raised here after all are done; a panic in `mine` waits for the jobs
    /// before it unwinds.
    pub fn run<R>(&mut self, jobs: &mut [&mut (dyn FnMut() + Send)], mine: impl FnOnce() -> R) -> R {
        assert!(jobs.len() <= self.helpers.len(), "more jobs than helpers");
        let started = &self.helpers[..jobs.len()];
        for (h, job) in started.iter().zip(jobs.iter_mut()) {
            let job: *mut (dyn FnMut() + Send + '_) = &mut **job;
            // SAFETY: the lifetime is erased only for the helper's use of
            // the pointer, which ends before this function returns or
            // unwinds: `Wait` below waits for every started job on drop.
            let job: Job = unsafe { std::mem::transmute(job) };
            // SAFETY: the helper is IDLE (every earlier run waited for it),
            // so it does not read `job` now.
            unsafe { *h.shared.job.get() = Some(job) };
            h.shared.state.store(READY, SeqCst);
            if h.shared.parked.load(SeqCst) {
                if let Some(t) = &h.thread {
                    t.thread().unpark();
                }
            }
        }
        let wait = Wait(started);
        let mine = mine();
        let panicked = wait.finish();
        assert!(!panicked, "a helper thread's job panicked");
        mine
    }
}

/// Waits for the started helpers (also when the caller's part unwinds).
struct Wait<'a>(&'a [Helper]);

impl Wait<'_> {
    /// Waits and reports whether a job panicked.
    fn finish(self) -> bool {
        let panicked = wait_all(self.0);
        std::mem::forget(self);
        panicked
    }
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        wait_all(self.0);
    }
}

fn wait_all(helpers: &[Helper]) -> bool {
    let mut panicked = false;
    for h in helpers {
        let since = Instant::now();
        let state = loop {
            match h.shared.state.load(SeqCst) {
                s @ (DONE | PANICKED) => break s,
                _ if since.elapsed() < SPIN => std::hint::spin_loop(),
                // A long job (an opponent's search): give the core away.
                _ => std::thread::yield_now(),
            }
        };
        panicked |= state == PANICKED;
        h.shared.state.store(IDLE, SeqCst);
    }
    panicked
}

fn helper_loop(shared: &Shared) {
    loop {
        let since = Instant::now();
        loop {
            match shared.state.load(SeqCst) {
                READY => break,
                STOP => return,
                _ if since.elapsed() < SPIN => std::hint::spin_loop(),
                _ => {
                    // Announce the park, then look again: the caller stores
                    // READY before it reads `parked`, so one of the two sees
                    // the other (both SeqCst) and no wake-up is lost.
                    shared.parked.store(true, SeqCst);
                    if !matches!(shared.state.load(SeqCst), READY | STOP) {
                        std::thread::park();
                    }
                    shared.parked.store(false, SeqCst);
                }
            }
        }
        // SAFETY: READY was stored after the job; the caller waits for
        // DONE / PANICKED before the job's borrow ends.
        let job = unsafe { (*shared.job.get()).take() }.expect("a job with READY");
        let ok = catch_unwind(AssertUnwindSafe(|| unsafe { (*job)() })).is_ok();
        shared.state.store(if ok { DONE } else { PANICKED }, SeqCst);
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        for h in &mut self.helpers {
            h.shared.state.store(STOP, SeqCst);
            if let Some(t) = h.thread.take() {
                t.thread().unpark();
                let _ = t.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_once_per_run_and_sees_the_callers_borrows() {
        let mut helpers = Helpers::new(2).unwrap();
        let mut totals = [0u64; 3];
        for round in 0..2_000u64 {
            let (a, rest) = totals.split_at_mut(1);
            let (b, c) = rest.split_at_mut(1);
            let mut j1 = || b[0] += round;
            let mut j2 = || c[0] += 2 * round;
            let mine = helpers.run(&mut [&mut j1, &mut j2], || {
                a[0] += 3 * round;
                7
            });
            assert_eq!(mine, 7);
        }
        let s: u64 = (0..2_000).sum();
        assert_eq!(totals, [3 * s, s, 2 * s]);
    }

    #[test]
    fn a_parked_helper_is_woken() {
        let mut helpers = Helpers::new(1).unwrap();
        let mut n = 0;
        for _ in 0..3 {
            std::thread::sleep(SPIN * 4);
            let mut job = || n += 1;
            helpers.run(&mut [&mut job], || ());
        }
        assert_eq!(n, 3);
    }

    #[test]
    fn a_panicking_job_is_raised_in_the_caller_and_the_helper_lives_on() {
        let mut helpers = Helpers::new(1).unwrap();
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut job = || panic!("boom");
            helpers.run(&mut [&mut job], || ())
        }));
        assert!(r.is_err());
        let mut ran = false;
        let mut job = || ran = true;
        helpers.run(&mut [&mut job], || ());
        assert!(ran);
    }
}
