//! A comparison level's notes in the history (schema 16, `levels.notes`): how the server ran the
//! workload where that differs from the table's heading or the other rows (`webstand_results::Note`),
//! as one JSON array (written by `Store::add_notes`), so that a comparison read back says what
//! compare said. Levels of other runs, and levels saved before, read without them.

use webstand_results::Note;

/// The step that adds it to an older file, taken only when the column is missing.
pub(crate) const COLUMN: (&str, &str, &str) = ("levels", "notes", "TEXT");

/// What the column holds; a column that is empty or does not parse (written by hand, cut short)
/// reads as none.
pub(crate) fn read(text: Option<&str>) -> Option<Vec<Note>> {
    text.and_then(|t| serde_json::from_str(t).ok())
}

#[cfg(test)]
mod tests {
    use crate::tests::{meta, synthetic_result};
    use crate::Store;
    use rusqlite::Connection;
    use std::time::Duration;
    use webstand_results::{Note, TlsNote};

    #[test]
    fn a_levels_notes_come_back_and_a_version_15_file_reads_without_them() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("notes.db");
        let s = Store::open(Some(&db)).unwrap();
        let id = s.begin_run(&meta()).unwrap();
        let r = synthetic_result(5, 100, Duration::from_secs(1));
        s.add_level(id, "nginx/cgi", 2, 1, None, &r).unwrap();
        let notes = [
            Note::CgiThroughFcgiwrap { processes: 6 },
            Note::Tls(TlsNote::TicketsOnly {
                cacheless: Some("lighttpd".into()),
            }),
        ];
        s.add_notes(id, "nginx/cgi", 2, &notes).unwrap();
        assert_eq!(
            s.load_run(id).unwrap().levels[0].notes,
            Some(notes.to_vec())
        );
        assert!(
            s.add_notes(id, "nginx/cgi", 3, &notes).is_err(),
            "no such level"
        );
        drop(s);
        // What schema 15 wrote: no notes column. A reader takes it as it is; a writer adds it.
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch("ALTER TABLE levels DROP COLUMN notes; PRAGMA user_version = 15;")
            .unwrap();
        drop(conn);
        let old = Store::open_existing(Some(&db)).unwrap();
        assert_eq!(old.load_run(id).unwrap().levels[0].notes, None);
        drop(old);
        let writer = Store::open(Some(&db)).unwrap();
        writer.add_notes(id, "nginx/cgi", 2, &notes[..1]).unwrap();
        assert_eq!(
            writer.load_run(id).unwrap().levels[0].notes,
            Some(notes[..1].to_vec())
        );
    }
}
