//! A training run's progress lines on stdout: one JSON event per line with
//! `--json`, else the person-facing text. Its own module because the
//! trainer, the intake of a distributed run and the workers all report
//! this way, and none of them should import another for it.

/// Writes `ev` (with `--json`) or `text` as one line, flushed at once so a
/// watching process sees it as it happens.
pub(crate) fn emit(json: bool, ev: &crate::events::Event, text: &str) {
    use std::io::Write;
    if json {
        return crate::events::emit(ev);
    }
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{text}");
    let _ = o.flush();
}
