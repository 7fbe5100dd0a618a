//! `star2`: Star1 with probing of the first child (`search::star2`). The chance family runs it
//! (`registry::chance`: `depth`, the bounds, iterative deepening, the output).

crate::registry::chance::chance_kernel!(
    /// `star2`: Star1 with probing of the first child.
    Star2,
    "star2",
    |_| Ok(crate::registry::chance::Kernel::Star2)
);
