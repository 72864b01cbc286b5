//! webstand across MPI ranks: `mpirun -np N webstand bench|sweep …`.
//!
//! Rank 0 runs the command as a single process would; wherever it would call the engine, it instead
//! splits the plan ([`split`]), sends each rank its share, agrees a start instant with them, runs its
//! own share, and adds the ranks' results up exactly ([`merge`]). The other ranks only serve plans.
//! The split and the merge are pure and need no MPI; the protocol ([`ranks`], feature `mpi`) is
//! rsmpi over OpenMPI. The engine knows nothing of any of this.

pub mod merge;
#[cfg(feature = "mpi")]
pub mod ranks;
pub mod split;
pub mod start;

pub use merge::{merge, Merged, RankReport, RankRow};
pub use split::split;
