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
