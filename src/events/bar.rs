//! The one progress bar every long run shows on a terminal (tournament
//! games, training steps and games, book positions): one look, and hidden
//! where it would get in the way — under `--json` (the events are the
//! progress there) or when standard error is not a terminal (logs).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// How a bar reads; build it with [`bar`], finish with [`Bar::start`].
#[derive(Clone, Debug)]
pub struct Bar<'a> {
    unit: &'a str,
    eta: bool,
    label: bool,
    hidden: bool,
}

/// A bar counting `unit` ("games", "positions", "steps"), with an ETA and
/// the message (`set_message`) at its end.
pub fn bar(unit: &str) -> Bar<'_> {
    Bar {
        unit,
        eta: true,
        label: false,
        hidden: false,
    }
}

impl<'a> Bar<'a> {
    /// No bar when `hidden` (pass the run's `--json`).
    pub fn hidden(self, hidden: bool) -> Self {
        Bar { hidden, ..self }
    }

    /// Shows the ETA only when `eta`: a run that may stop early (an SPRT)
    /// has none worth reading.
    pub fn eta(self, eta: bool) -> Self {
        Bar { eta, ..self }
    }

    /// Leaves room before the bar for a label set with `set_prefix` (the
    /// trainer's "self-play 3", "train 3", "eval 3"), right-aligned so the
    /// phases' bars line up.
    pub fn labelled(self) -> Self {
        Bar { label: true, ..self }
    }

    /// The bar, `len` long (0 when the length comes later: `set_length`).
    pub fn start(self, len: u64) -> ProgressBar {
        if self.hidden || !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let b = ProgressBar::new(len);
        b.set_style(ProgressStyle::with_template(&self.template()).unwrap_or_else(|_| ProgressStyle::default_bar()));
        b
    }

    fn template(&self) -> String {
        format!(
            "{}{{bar:30.cyan/blue}} {{pos}}/{{len}} {}  {{per_sec}}{}  {{msg}}",
            if self.label { "{prefix:>10} " } else { "" },
            self.unit,
            if self.eta { "  ETA {eta}" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_has_what_was_asked_and_parses() {
        let t = bar("games").eta(false).template();
        assert_eq!(t, "{bar:30.cyan/blue} {pos}/{len} games  {per_sec}  {msg}");
        let t = bar("steps").labelled().template();
        assert_eq!(
            t,
            "{prefix:>10} {bar:30.cyan/blue} {pos}/{len} steps  {per_sec}  ETA {eta}  {msg}"
        );
        for b in [bar("positions"), bar("games").eta(false), bar("steps").labelled()] {
            assert!(ProgressStyle::with_template(&b.template()).is_ok());
        }
    }

    #[test]
    fn hidden_is_hidden() {
        assert!(bar("games").hidden(true).start(10).is_hidden());
    }
}
