//! Formatting of measured figures for sentences and tables: binary units, fixed decimals, so that
//! the same number always reads the same way. Exact byte counts stay in the JSON.

/// Bytes in the largest binary unit that keeps the value at or above 1 (`12.34 MiB`).
pub fn bytes(value: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    if !value.is_finite() {
        return "n/a".into();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    let mut v = value.abs();
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{sign}{v:.0} B")
    } else {
        format!("{sign}{v:.2} {}", UNITS[unit])
    }
}

/// A percentage with one decimal and its sign (`-12.3%`); one that rounds to zero has no sign
/// (`0.0%`), since it points neither way.
pub fn pct(value: f64) -> String {
    if value.is_finite() && (value * 10.0).round() == 0.0 {
        "0.0%".into()
    } else if value.is_finite() {
        format!("{value:+.1}%")
    } else {
        "n/a".into()
    }
}

/// Seconds in ms or s, three significant figures.
pub fn seconds(value: f64) -> String {
    if !value.is_finite() {
        "n/a".into()
    } else if value < 1.0 {
        format!("{:.3} ms", value * 1e3)
    } else {
        format!("{value:.3} s")
    }
}

/// A rate with thousands grouping for large values.
pub fn rate(value: f64) -> String {
    if !value.is_finite() {
        "n/a".into()
    } else if value >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// The sentence form of a name: its first letter upper-case (`Layer norm`).
pub fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|f| f.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `(measured - predicted) / predicted` in percent.
pub fn diff_pct(predicted: f64, measured: f64) -> f64 {
    if predicted == 0.0 {
        f64::NAN
    } else {
        (measured - predicted) / predicted * 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_units() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(65536.0), "64.00 KiB");
        assert_eq!(bytes(3.0 * 1024.0 * 1024.0), "3.00 MiB");
        assert_eq!(bytes(-2048.0), "-2.00 KiB");
        assert_eq!(pct(-12.345), "-12.3%");
        assert_eq!(pct(-0.0), "0.0%");
        assert_eq!(pct(-0.04), "0.0%");
        assert_eq!(pct(0.05), "+0.1%");
        assert_eq!(seconds(0.0123), "12.300 ms");
    }
}

/// A whole number with thousands separators (`50,257`).
pub fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod thousands_tests {
    #[test]
    fn groups_of_three() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(50257), "50,257");
        assert_eq!(super::thousands(124_439_808), "124,439,808");
    }
}
