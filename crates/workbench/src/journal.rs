//! Resume: a run's journal of finished points and comparisons, beside its output folder.
//!
//! Question: when a run dies (SIGKILL, a lost lease, a crash) or is interrupted, can what it
//! measured be kept instead of measured again?
//! Method: every finished point, every timed comparison (one unit: its baseline and technique
//! are measured interleaved), the calibration and the capacity search are written as they end,
//! each atomically ([`write_atomic`]), to `.<out>.journal/` beside the output folder: a fixed
//! name, so that the next run finds it. Each entry carries the key of the run that wrote it
//! (device kind and name, profile, workbench version, git commit, build profile) and, for a
//! point, its configuration. `run --resume` keeps an entry whose key and configuration equal
//! the current run's and measures everything else; a failed point is always measured again.
//! Answer: a killed run loses at most the point or comparison that was running; the guide says
//! which points came from which run ([`results::Resumed`]). The journal is removed when a run
//! ends with every point measured, and discarded (with a line saying so) by a run without
//! `--resume`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use results::{
    Calibration, CapacityRecord, DeviceKind, KeptFromRun, MeasuredAgain, MeasuredPoint,
    PairedComparison, Point, Profile, Resumed,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::output::write_atomic;

/// Version of the journal's entries; entries of another version are measured again.
const JOURNAL_VERSION: u32 = 1;

/// What must be equal for a journal entry to be kept: the device, the sizes and the code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunKey {
    /// The device kind.
    pub device: DeviceKind,
    /// The device as its driver names it (the CPU's model on the CPU).
    pub device_name: String,
    /// Point sizes.
    pub profile: Profile,
    /// The workbench's version.
    pub workbench_version: String,
    /// The git commit the binary was built from (`-dirty` with changes).
    pub git_commit: String,
    /// `release` or `debug`.
    pub build_profile: String,
    /// A hash of the binary's bytes: the commit alone does not see uncommitted changes.
    pub binary_hash: String,
}

/// A hash of the file at `path` (the running binary), in hex; `unknown` where it cannot be
/// read.
pub fn file_hash(path: &Path) -> String {
    use std::hash::Hasher;
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return "unknown".into();
    };
    // SipHash with fixed keys: the same bytes hash the same in every process.
    #[allow(deprecated)]
    let mut hasher = std::hash::SipHasher::new();
    let mut buffer = vec![0_u8; 1 << 20];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => hasher.write(&buffer[..n]),
            Err(_) => return "unknown".into(),
        }
    }
    format!("{:016x}", hasher.finish())
}

impl RunKey {
    /// Why an entry written under `other` is not kept by a run with this key, if it is not.
    fn mismatch(&self, other: &RunKey) -> Option<String> {
        let differs = |what: &str, was: &str, is: &str| {
            Some(format!("measured with {what} {was}, this run has {is}"))
        };
        if self.device != other.device || self.device_name != other.device_name {
            return differs(
                "device",
                &format!("{} ({})", other.device.name(), other.device_name),
                &format!("{} ({})", self.device.name(), self.device_name),
            );
        }
        if self.profile != other.profile {
            return differs(
                "profile",
                &format!("{:?}", other.profile),
                &format!("{:?}", self.profile),
            );
        }
        if self.workbench_version != other.workbench_version || self.git_commit != other.git_commit
        {
            return differs(
                "workbench",
                &format!("{} at {}", other.workbench_version, other.git_commit),
                &format!("{} at {}", self.workbench_version, self.git_commit),
            );
        }
        if self.build_profile != other.build_profile {
            return differs("a", &other.build_profile, &self.build_profile);
        }
        if self.binary_hash != other.binary_hash {
            return Some(format!(
                "measured by another build of the workbench (binary {}, this run's {})",
                other.binary_hash, self.binary_hash
            ));
        }
        None
    }
}

/// One journal file.
#[derive(Debug, Serialize, Deserialize)]
struct Entry<T> {
    journal_version: u32,
    key: RunKey,
    /// When the run that wrote it started.
    run_started_at: String,
    /// For a point: its configuration; for a comparison: its baseline's and technique's.
    points: Vec<Point>,
    value: T,
}

/// What the journal says about one point or comparison.
#[derive(Debug)]
pub enum Lookup<T> {
    /// Nothing journaled (or not resuming): measure it.
    Missing,
    /// Journaled by a run that started at `run_started_at`, and valid: keep it.
    Kept {
        /// The journaled value.
        value: T,
        /// When the run that measured it started.
        run_started_at: String,
        /// That run's commit.
        git_commit: String,
    },
    /// Journaled but not valid now: measure it again, for this reason.
    Stale(String),
}

/// A run's journal (see the module's documentation).
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    key: RunKey,
    run_started_at: String,
    resume: bool,
    /// What this run kept and measured again, by experiment.
    kept: Mutex<BTreeMap<String, Resumed>>,
}

impl Journal {
    /// The journal of output folder `out`: `.<name>.journal/` beside it.
    pub fn path_for(out: &Path) -> PathBuf {
        let (parent, name) = crate::output::parent_and_name(out);
        parent.join(format!(".{name}.journal"))
    }

    /// Opens the journal of `out` for a run with `key` that started at `run_started_at`. With
    /// `resume`, its entries are offered to [`Self::point`] and friends; without, an earlier
    /// run's journal is discarded. Returns the journal and a line for the user, if any.
    /// Must be called with the output's [`crate::output::RunLock`] held.
    pub fn open(
        out: &Path,
        key: RunKey,
        run_started_at: String,
        resume: bool,
    ) -> std::io::Result<(Self, Option<String>)> {
        let dir = Self::path_for(out);
        let entries = count_files(&dir);
        let note = match (resume, entries) {
            (true, 0) => Some(format!(
                "--resume: no journal of an earlier run at {}; measuring everything",
                dir.display()
            )),
            (true, n) => Some(format!(
                "--resume: {n} journaled point(s), comparison(s) and searches in {}; those that \
                 match this run are kept",
                dir.display()
            )),
            (false, 0) => None,
            (false, n) => {
                std::fs::remove_dir_all(&dir)?;
                Some(format!(
                    "note: discarded the journal of an earlier, unfinished run ({n} entries in \
                     {}); `--resume` keeps what it measured",
                    dir.display()
                ))
            }
        };
        std::fs::create_dir_all(&dir)?;
        Ok((
            Self {
                dir,
                key,
                run_started_at,
                resume,
                kept: Mutex::new(BTreeMap::new()),
            },
            note,
        ))
    }

    /// The journal's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Removes the journal (the run it served is complete).
    pub fn remove(&self) -> std::io::Result<()> {
        std::fs::remove_dir_all(&self.dir)
    }

    /// A point of `experiment` journaled with the same configuration by a run with the same
    /// key. A failed point is measured again.
    pub fn point(&self, experiment: &str, point: &Point) -> Lookup<MeasuredPoint> {
        let found =
            match self.lookup::<MeasuredPoint>(&self.point_file(experiment, &point.id), &[point]) {
                Lookup::Kept { value, .. } if value.outcome.is_failure() => Lookup::Stale(format!(
                    "it failed in the earlier run ({})",
                    value.outcome.reason()
                )),
                other => other,
            };
        self.noted(experiment, &point.id, Entries::Points, found)
    }

    /// Journals a finished point.
    pub fn save_point(&self, experiment: &str, point: &MeasuredPoint) -> std::io::Result<()> {
        self.save(
            &self.point_file(experiment, &point.point.id),
            std::slice::from_ref(&point.point),
            point,
        )
    }

    /// A comparison of `baseline` and `technique` journaled with both configurations equal.
    pub fn comparison(
        &self,
        experiment: &str,
        baseline: &Point,
        technique: &Point,
    ) -> Lookup<PairedComparison> {
        let id = comparison_id(baseline, technique);
        let found = self.lookup::<PairedComparison>(
            &self.comparison_file(experiment, &id),
            &[baseline, technique],
        );
        self.noted(experiment, &id, Entries::Comparisons, found)
    }

    /// Journals a timed comparison.
    pub fn save_comparison(
        &self,
        experiment: &str,
        baseline: &Point,
        technique: &Point,
        comparison: &PairedComparison,
    ) -> std::io::Result<()> {
        let id = comparison_id(baseline, technique);
        self.save(
            &self.comparison_file(experiment, &id),
            &[baseline.clone(), technique.clone()],
            comparison,
        )
    }

    /// The journaled calibration.
    pub fn calibration(&self) -> Option<Calibration> {
        self.run_wide("calibration")
    }

    /// Journals the calibration.
    pub fn save_calibration(&self, calibration: &Calibration) -> std::io::Result<()> {
        self.save_run_wide("calibration", calibration)
    }

    /// The journaled capacity search.
    pub fn capacity(&self) -> Option<CapacityRecord> {
        self.run_wide("capacity")
    }

    /// Journals the capacity search.
    pub fn save_capacity(&self, capacity: &CapacityRecord) -> std::io::Result<()> {
        self.save_run_wide("capacity", capacity)
    }

    /// A value the whole run shares (`<journal>/<name>.json`), where it matches this run's key.
    fn run_wide<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        match self.lookup(&self.dir.join(format!("{name}.json")), &[]) {
            Lookup::Kept { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Journals a value the whole run shares.
    fn save_run_wide<T: Serialize>(&self, name: &str, value: &T) -> std::io::Result<()> {
        self.save(&self.dir.join(format!("{name}.json")), &[], value)
    }

    /// What this run kept from earlier runs and measured again, for `experiment`'s record;
    /// `None` when it kept nothing and measured nothing again.
    pub fn resumed(&self, experiment: &str) -> Option<Resumed> {
        let kept = self.kept.lock().expect("journal bookkeeping");
        kept.get(experiment).cloned().map(|r| Resumed {
            run_started_at: self.run_started_at.clone(),
            ..r
        })
    }

    fn point_file(&self, experiment: &str, id: &str) -> PathBuf {
        self.entry_file(experiment, "point", id)
    }

    fn comparison_file(&self, experiment: &str, id: &str) -> PathBuf {
        self.entry_file(experiment, "comparison", id)
    }

    /// `<journal>/<experiment>/<kind>-<id>.json`, both names made safe for a file system.
    fn entry_file(&self, experiment: &str, kind: &str, id: &str) -> PathBuf {
        self.dir
            .join(file_name(experiment))
            .join(format!("{kind}-{}.json", file_name(id)))
    }

    fn save<T: Serialize>(&self, path: &Path, points: &[Point], value: &T) -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let entry = Entry {
            journal_version: JOURNAL_VERSION,
            key: self.key.clone(),
            run_started_at: self.run_started_at.clone(),
            points: points.to_vec(),
            value,
        };
        let text = serde_json::to_string(&entry).map_err(std::io::Error::other)?;
        write_atomic(path, text.as_bytes())
    }

    fn lookup<T: DeserializeOwned>(&self, path: &Path, points: &[&Point]) -> Lookup<T> {
        if !self.resume {
            return Lookup::Missing;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            return Lookup::Missing;
        };
        // Written atomically, an entry is whole; one that does not parse (another version, or
        // a file a user edited) is measured again.
        let entry: Entry<T> = match serde_json::from_str(&text) {
            Ok(entry) => entry,
            Err(e) => return Lookup::Stale(format!("its journal entry is unreadable: {e}")),
        };
        if entry.journal_version != JOURNAL_VERSION {
            return Lookup::Stale(format!(
                "its journal entry is of version {}, this workbench writes {JOURNAL_VERSION}",
                entry.journal_version
            ));
        }
        if let Some(why) = self.key.mismatch(&entry.key) {
            return Lookup::Stale(why);
        }
        let same = entry.points.len() == points.len()
            && entry
                .points
                .iter()
                .zip(points)
                .all(|(a, b)| a.same_measurement(b));
        if !same {
            return Lookup::Stale("its configuration has changed".into());
        }
        Lookup::Kept {
            value: entry.value,
            run_started_at: entry.run_started_at,
            git_commit: entry.key.git_commit,
        }
    }

    /// Records what `found` says of entry `id` for `experiment`'s record (kept from which
    /// run, or measured again and why), and returns it.
    fn noted<T>(
        &self,
        experiment: &str,
        id: &str,
        entries: Entries,
        found: Lookup<T>,
    ) -> Lookup<T> {
        match &found {
            Lookup::Kept {
                run_started_at,
                git_commit,
                ..
            } => self.note_kept(experiment, run_started_at, git_commit, entries, id),
            Lookup::Stale(why) => self.note_again(experiment, id, why),
            Lookup::Missing => {}
        }
        found
    }

    fn note_kept(
        &self,
        experiment: &str,
        run_started_at: &str,
        git_commit: &str,
        entries: Entries,
        id: &str,
    ) {
        let mut kept = self.kept.lock().expect("journal bookkeeping");
        let resumed = kept.entry(experiment.into()).or_default();
        let position = resumed
            .kept
            .iter()
            .position(|k| k.run_started_at == run_started_at && k.git_commit == git_commit);
        let run = match position {
            Some(i) => &mut resumed.kept[i],
            None => {
                resumed.kept.push(KeptFromRun {
                    run_started_at: run_started_at.into(),
                    git_commit: git_commit.into(),
                    ..KeptFromRun::default()
                });
                resumed.kept.last_mut().expect("just pushed")
            }
        };
        match entries {
            Entries::Points => run.points.push(id.into()),
            Entries::Comparisons => run.comparisons.push(id.into()),
        }
    }

    fn note_again(&self, experiment: &str, id: &str, reason: &str) {
        let mut kept = self.kept.lock().expect("journal bookkeeping");
        kept.entry(experiment.into())
            .or_default()
            .measured_again
            .push(MeasuredAgain {
                id: id.into(),
                reason: reason.into(),
            });
    }
}

/// Which of a run's lists a kept entry joins.
#[derive(Debug, Clone, Copy)]
enum Entries {
    Points,
    Comparisons,
}

/// A comparison's id: `baseline vs technique`.
pub fn comparison_id(baseline: &Point, technique: &Point) -> String {
    format!("{} vs {}", baseline.id, technique.id)
}

/// `text` as a file name: letters, digits, `.`, `-` and `_` kept, anything else `_`.
fn file_name(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// How many files a folder holds, its subfolders included (0 where it does not exist).
fn count_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                count_files(&path)
            } else {
                1
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::Outcome;

    fn key() -> RunKey {
        RunKey {
            device: DeviceKind::Cpu,
            device_name: "a CPU".into(),
            profile: Profile::Quick,
            workbench_version: "0.1.0".into(),
            git_commit: "abc".into(),
            build_profile: "release".into(),
            binary_hash: "0123".into(),
        }
    }

    fn point(id: &str, batch: u64) -> Point {
        Point {
            id: id.into(),
            label: id.into(),
            warmup: 1,
            repeats: 2,
            config: serde_json::json!({ "batch": batch }),
        }
    }

    fn failed(point: Point) -> MeasuredPoint {
        MeasuredPoint {
            point,
            outcome: Outcome::Failed {
                reason: "it crashed".into(),
                stderr_tail: String::new(),
            },
        }
    }

    fn unsupported(point: Point) -> MeasuredPoint {
        MeasuredPoint {
            point,
            outcome: Outcome::Unsupported {
                lacks: "bf16".into(),
            },
        }
    }

    #[test]
    fn a_matching_entry_is_kept_and_anything_else_measured_again() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let (first, note) = Journal::open(&out, key(), "t1".into(), false).unwrap();
        assert!(note.is_none());
        first.save_point("e", &unsupported(point("a", 1))).unwrap();
        first.save_point("e", &failed(point("b", 1))).unwrap();
        first.save_point("e", &unsupported(point("c", 1))).unwrap();
        drop(first);

        // Resumed: a kept, b failed before, c's configuration changed, d new.
        let (second, note) = Journal::open(&out, key(), "t2".into(), true).unwrap();
        assert!(note.unwrap().contains("3 journaled"));
        assert!(
            matches!(second.point("e", &point("a", 1)), Lookup::Kept { ref run_started_at, .. } if run_started_at == "t1")
        );
        assert!(
            matches!(second.point("e", &point("b", 1)), Lookup::Stale(ref why) if why.contains("failed"))
        );
        assert!(
            matches!(second.point("e", &point("c", 2)), Lookup::Stale(ref why) if why.contains("configuration"))
        );
        assert!(matches!(second.point("e", &point("d", 1)), Lookup::Missing));
        let resumed = second.resumed("e").unwrap();
        assert_eq!(resumed.run_started_at, "t2");
        assert_eq!(resumed.kept.len(), 1);
        assert_eq!(resumed.kept[0].points, ["a"]);
        assert_eq!(resumed.measured_again.len(), 2);
        drop(second);

        // Another commit keeps nothing.
        let other = RunKey {
            git_commit: "def".into(),
            ..key()
        };
        let (third, _) = Journal::open(&out, other, "t3".into(), true).unwrap();
        assert!(
            matches!(third.point("e", &point("a", 1)), Lookup::Stale(ref why) if why.contains("abc"))
        );
        drop(third);

        // Without --resume the journal is discarded, and says so.
        let (fourth, note) = Journal::open(&out, key(), "t4".into(), false).unwrap();
        assert!(note.unwrap().contains("discarded"));
        assert!(matches!(fourth.point("e", &point("a", 1)), Lookup::Missing));
        assert_eq!(count_files(fourth.dir()), 0);
        fourth.remove().unwrap();
        assert!(!Journal::path_for(&out).exists());
    }

    #[test]
    fn an_unreadable_entry_is_measured_again() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let (journal, _) = Journal::open(&out, key(), "t1".into(), true).unwrap();
        let path = journal.point_file("e", "a");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{ torn").unwrap();
        assert!(
            matches!(journal.point("e", &point("a", 1)), Lookup::Stale(ref why) if why.contains("unreadable"))
        );
    }
}
