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
        Self::check(target)?;
        let not_writable = |e: std::io::Error| BadInput::OutputNotWritable {
            path: target.to_path_buf(),
            reason: e.to_string(),
        };
        let (parent, name) = parent_and_name(target);
        std::fs::create_dir_all(&parent).map_err(not_writable)?;
        let dir = tempfile::Builder::new()
            .prefix(&format!(".{name}.partial-"))
            .tempdir_in(&parent)
            .map_err(not_writable)?;
        Ok(Self {
            dir,
            target: target.to_path_buf(),
        })
    }

    /// Refuses a `target` that may not be replaced (a file, or a folder that is not empty and
    /// was not written by the workbench), writing nothing: a run checks it before anything
    /// else touches the disk.
    pub fn check(target: &Path) -> Result<(), BadInput> {
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
        Ok(())
    }

    /// The temporary folder to write into.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The folder it will replace when committed.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Marks the folder as a workbench site and moves it into place, replacing the old one.
    pub fn commit(self) -> std::io::Result<PathBuf> {
        std::fs::write(
            self.dir.path().join(MARKER),
            "written by workbench; safe to replace\n",
        )?;
        let staged = self.dir.keep();
        if self.target.exists() {
            // `.<name>.partial-XXXX.old`: found and put back by the next run if a kill lands
            // between the two renames.
            let mut old_name = staged.file_name().unwrap_or_default().to_os_string();
            old_name.push(".old");
            let old = staged.with_file_name(old_name);
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

/// The folder `target` is in (`.` for a bare name) and its name (`site` for a path without
/// one): what a run puts beside its output (staging folder, lock, journal) is named from them.
pub fn parent_and_name(target: &Path) -> (PathBuf, String) {
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "site".into());
    (parent, name)
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder, flushed to disk,
/// then renamed over `path`, so that a kill at any moment leaves the old file or the new one,
/// never a torn one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let (dir, _) = parent_and_name(path);
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
        let (parent, name) = parent_and_name(target);
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

/// Whether process `pid` exists and is not a zombie (Linux's /proc; elsewhere assumed alive, so
/// a lock is never taken from a live run).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc_root = Path::new("/proc");
    if !proc_root.join("self").exists() {
        return true;
    }
    // A killed process stays a zombie (state Z) until its parent reaps it: it is gone.
    match std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X"))
        }
        Err(_) => false,
    }
}

/// Tidies what runs that died left beside `target`; call with `target`'s [`RunLock`] held (so
/// that no live run owns them). A run killed between [`Staging::commit`]'s two renames left
/// the old guide as `.<name>.partial-*.old` and no `target`: it is put back. Every other
/// staging folder is removed. Each is said in one line.
pub fn clean_stale_staging(target: &Path) {
    for stale in stale_staging(target) {
        let is_old = stale.extension().is_some_and(|x| x == "old");
        if is_old && !target.exists() && std::fs::rename(&stale, target).is_ok() {
            println!(
                "note: put back {} as {}: a run was killed while replacing it",
                stale.display(),
                target.display()
            );
        } else if std::fs::remove_dir_all(&stale).is_ok() {
            println!(
                "note: removed {}, left by a run that did not finish",
                stale.display()
            );
        }
    }
}

/// The staging folders (`.<name>.partial-*`, and their `.old` siblings) beside `target`: left
/// by runs that died, when no run holds `target`'s [`RunLock`]; the `.old` ones first.
pub fn stale_staging(target: &Path) -> Vec<PathBuf> {
    let (parent, name) = parent_and_name(target);
    let prefix = format!(".{name}.partial-");
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return Vec::new();
    };
    let mut stale: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    stale.sort_by_key(|p| (p.extension().is_none_or(|x| x != "old"), p.clone()));
    stale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guide_killed_half_way_through_its_replacement_is_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("site");
        let old = dir.path().join(".site.partial-Ab12.old");
        let new = dir.path().join(".site.partial-Ab12");
        let other = dir.path().join(".site.partial-Cd34");
        for folder in [&old, &new, &other] {
            std::fs::create_dir_all(folder).unwrap();
        }
        std::fs::write(old.join("index.html"), "the old guide").unwrap();
        clean_stale_staging(&target);
        assert_eq!(
            std::fs::read_to_string(target.join("index.html")).unwrap(),
            "the old guide"
        );
        assert!(stale_staging(&target).is_empty());

        // With the guide in place, a leftover `.old` is only removed.
        std::fs::create_dir_all(&old).unwrap();
        clean_stale_staging(&target);
        assert!(target.join("index.html").exists());
        assert!(stale_staging(&target).is_empty());
    }

    #[test]
    fn a_commit_replaces_the_guide_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("site");
        for text in ["first", "second"] {
            let staging = Staging::new(&target).unwrap();
            std::fs::write(staging.path().join("index.html"), text).unwrap();
            staging.commit().unwrap();
            assert_eq!(
                std::fs::read_to_string(target.join("index.html")).unwrap(),
                text
            );
        }
        let beside: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(beside.len(), 1);
    }
}
