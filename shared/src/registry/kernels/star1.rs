//! `star1`: Ballard's Star1 (`search::star1`). The chance family runs it (`registry::chance`:
//! `depth`, the bounds, iterative deepening, the output).

crate::registry::chance::chance_kernel!(
    /// `star1`: Ballard's Star1.
    Star1,
    "star1",
    |_| Ok(crate::registry::chance::Kernel::Star1)
);
