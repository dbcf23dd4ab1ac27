//! Durations as scenarios write them: `30s`, `500ms`, `2m`, `1h`, or a bare
//! number of seconds (`30`, `1.5`).

use std::time::Duration;

/// Why a duration was refused; each variant keeps the text as written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not a number with a known unit.
    #[error(
        "invalid duration `{0}`: expected a number with a unit (ms, s, m or h), like 30s, 500ms, 2m or 1h; \
         a bare number is seconds"
    )]
    Invalid(String),
    #[error("invalid duration `{0}`: a duration cannot be negative")]
    Negative(String),
    /// A whole number of units that overflows.
    #[error("invalid duration `{0}`: too long")]
    TooLong(String),
}

/// Parses a duration. Whole numbers are converted exactly (no float
/// rounding, so `1ms` is exactly one millisecond); fractions such as `1.5s`
/// go through `f64`. Negative, infinite and overflowing values are refused.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let t = s.trim();
    let invalid = || DurationError::Invalid(s.to_string());
    if t.starts_with('-') {
        return Err(DurationError::Negative(s.to_string()));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num = num.strip_prefix('+').unwrap_or(num);
    if !num.chars().any(|c| c.is_ascii_digit()) {
        return Err(invalid());
    }
    // (seconds per unit as a fraction: numerator, denominator)
    let (mul, div): (u64, u64) = match unit.trim() {
        "" | "s" | "sec" | "secs" => (1, 1),
        "ms" => (1, 1000),
        "m" | "min" | "mins" => (60, 1),
        "h" => (3600, 1),
        _ => return Err(invalid()),
    };
    if let Ok(n) = num.parse::<u64>() {
        let too_long = || DurationError::TooLong(s.to_string());
        return if div == 1000 {
            Ok(Duration::from_millis(n))
        } else {
            n.checked_mul(mul).map(Duration::from_secs).ok_or_else(too_long)
        };
    }
    let v: f64 = num.parse().map_err(|_| invalid())?;
    Duration::try_from_secs_f64(v * mul as f64 / div as f64).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_bare_numbers() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("0.25s"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration(" 10 s "), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    }

    #[test]
    fn refusals_say_what_is_allowed() {
        for bad in ["", "fast", "10x", "s", "-5s", "1.2.3s", "99999999999999999999h"] {
            let e = parse_duration(bad).unwrap_err().to_string();
            assert!(e.contains("invalid duration"), "{bad}: {e}");
        }
        assert!(parse_duration("fast")
            .unwrap_err()
            .to_string()
            .contains("30s, 500ms, 2m or 1h"));
        assert!(parse_duration("-5s").unwrap_err().to_string().contains("negative"));
    }
}
