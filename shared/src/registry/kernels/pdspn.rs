//! `pdspn`: PDS-PN, a depth-first search at the frontier of a best-first tree
//! (`search::pns::pdspn`). The proof-number family runs it (`registry::pn`: its options, the probe
//! plan of an exact value, proof certificates, `analyse=all`).

crate::registry::pn::proof_number!(
    /// `pdspn`: PDS-PN, a depth-first search at the frontier of a best-first tree.
    Pdspn,
    "pdspn",
    Pdspn
);
