//! The command line's values, each read with one clear line for bad input (the exit is 2, see
//! [`BadInput`]): whole numbers, byte sizes, names from a list; and an answer written to
//! stdout. One module that `estimate`, `fit` and `inference` all read, so that none of them
//! imports another for a parser.

use crate::error::BadInput;

/// A positive whole number given as `flag`'s text.
pub fn positive(flag: &str, text: &str) -> Result<usize, BadInput> {
    match text.trim().parse::<i64>() {
        Ok(n) if n > 0 => Ok(n as usize),
        Ok(n) => Err(BadInput::BadModel(format!(
            "--{flag} must be a positive whole number, got {n}"
        ))),
        Err(_) => Err(BadInput::BadModel(format!(
            "--{flag} must be a positive whole number, got '{text}'"
        ))),
    }
}

/// The one of `all` whose `name` is `text`, given as `--flag`.
pub fn named<T: Copy>(
    flag: &str,
    text: &str,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<T, BadInput> {
    all.iter()
        .copied()
        .find(|&v| name(v) == text)
        .ok_or_else(|| {
            let known: Vec<&str> = all.iter().map(|&v| name(v)).collect();
            BadInput::BadModel(format!(
                "unknown --{flag} '{text}' (known: {})",
                known.join(", ")
            ))
        })
}

/// Reads `--flag`'s bytes: a positive number, with an optional unit (B, KiB, MiB, GiB, KB, MB,
/// GB).
pub fn parse_bytes(flag: &str, text: &str) -> Result<u64, BadInput> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        _ => {
            return Err(BadInput::BadModel(format!(
                "--{flag} '{text}': unknown unit (use B, KiB, MiB, GiB, KB, MB or GB)"
            )))
        }
    };
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v * scale >= 1.0 => Ok((v * scale) as u64),
        Ok(_) => Err(BadInput::BadModel(format!(
            "--{flag} '{text}' must be more than zero bytes"
        ))),
        Err(_) => Err(BadInput::BadModel(format!(
            "--{flag} '{text}' is not a number of bytes (512MiB, 2GB, 1000000)"
        ))),
    }
}

/// Writes `text` to stdout; a reader that stopped reading (`| head`) is not an error.
pub fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
