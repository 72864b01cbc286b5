//! Reports: results as text (ab's layout, the seeds' tables, the lab's comparison), JSON, CSV,
//! HdrHistogram's hgrm, and a self-contained HTML page with charts. Pure functions from results to text;
//! no sockets, no database. (Being written under issues 2, 4, 5 and 6.)
