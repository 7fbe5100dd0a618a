//! `pns`: best-first proof-number search (`search::pns::tree`). The proof-number family runs it
//! (`registry::pn`: its options, the probe plan of an exact value, proof certificates,
//! `analyse=all`).

crate::registry::pn::proof_number!(
    /// `pns`: best-first proof-number search.
    Pns,
    "pns",
    Pns
);
