//! Never a half-written site: everything is built in a temporary folder beside the target and
//! renamed into place at the end. A folder is only replaced if the workbench wrote it.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::error::BadInput;

/// Name of the marker file that says a folder is a workbench site.
pub const MARKER: &str = ".workbench";

/// A temporary folder that becomes the output folder on [`Staging::commit`].
pub struct Staging {
    dir: TempDir,
    target: PathBuf,
}

impl Staging {
    /// Checks `target` and makes the temporary folder beside it.
    pub fn new(target: &Path) -> Result<Self, BadInput> {
        if target.is_file() {
            return Err(BadInput::OutputIsFile(target.to_path_buf()));
        }
        if target.is_dir() && !target.join(MARKER).exists() {
            let empty = std::fs::read_dir(target)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
            if !empty {
                return Err(BadInput::OutputNotOurs(target.to_path_buf()));
            }
        }
        let not_writable = |e: std::io::Error| BadInput::OutputNotWritable {
            path: target.to_path_buf(),
            reason: e.to_string(),
        };
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(not_writable)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "site".into());
        let dir = tempfile::Builder::new()
            .prefix(&format!(".{name}.partial-"))
            .tempdir_in(&parent)
            .map_err(not_writable)?;
        Ok(Self {
            dir,
            target: target.to_path_buf(),
        })
    }

    /// The temporary folder to write into.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Marks the folder as a workbench site and moves it into place, replacing the old one.
    pub fn commit(self) -> std::io::Result<PathBuf> {
        std::fs::write(
            self.dir.path().join(MARKER),
            "written by workbench; safe to replace\n",
        )?;
        let staged = self.dir.keep();
        if self.target.exists() {
            let old = staged.with_extension("old");
            std::fs::rename(&self.target, &old)?;
            std::fs::rename(&staged, &self.target)?;
            std::fs::remove_dir_all(&old)?;
        } else {
            std::fs::rename(&staged, &self.target)?;
        }
        Ok(self.target)
    }

    /// Keeps the temporary folder (for a run that failed half-way) and returns its path.
    pub fn abandon(self) -> PathBuf {
        self.dir.keep()
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed to disk,
/// then renamed over `path`, so that a kill at any moment leaves the old file or the new one,
/// never a torn one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Holds `.<name>.lock` beside an output folder while a run writes it: a second run into the
/// same folder is refused with one line. The file names the holder's process id; a lock whose
/// process is gone (killed, crashed) is taken over, so a dead run never leaves it stuck.
pub struct RunLock {
    path: PathBuf,
}

impl RunLock {
    /// Takes the lock of `target`, or says who holds it.
    pub fn acquire(target: &Path) -> Result<Self, BadInput> {
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "site".into());
        let path = parent.join(format!(".{name}.lock"));
        let not_writable = |e: std::io::Error| BadInput::OutputNotWritable {
            path: target.to_path_buf(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(&parent).map_err(not_writable)?;
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut file) => {
                    use std::io::Write;
                    writeln!(file, "{}", std::process::id()).map_err(not_writable)?;
                    return Ok(Self { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|s| s.trim().parse::<u32>().ok());
                    match holder {
                        Some(pid) if process_alive(pid) => {
                            return Err(BadInput::Busy {
                                out: target.to_path_buf(),
                                pid,
                                lock: path,
                            })
                        }
                        // Its process is gone (or the file is unreadable): take it over.
                        _ => {
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(not_writable(e)),
            }
        }
        Err(not_writable(std::io::Error::other(format!(
            "cannot take the lock {}",
            path.display()
        ))))
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether process `pid` exists (Linux's /proc; elsewhere assumed alive, so a lock is never
/// taken from a live run).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc_root = Path::new("/proc");
    if proc_root.join("self").exists() {
        proc_root.join(pid.to_string()).exists()
    } else {
        true
    }
}
