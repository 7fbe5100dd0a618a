//! `pn2`: two-level proof-number search (`search::pns::pn2`). The proof-number family runs it
//! (`registry::pn`: its options, the probe plan of an exact value, proof certificates,
//! `analyse=all`).

crate::registry::pn::proof_number!(
    /// `pn2`: two-level proof-number search.
    Pn2,
    "pn2",
    Pn2
);
