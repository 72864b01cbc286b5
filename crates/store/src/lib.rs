//! The results history: every bench, sweep and compare run in an embedded SQLite database, written in
//! transactions so an interrupted run keeps what it completed. (Being written under issue 6.)
