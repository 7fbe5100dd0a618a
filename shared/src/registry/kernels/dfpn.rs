//! `dfpn`: depth-first proof-number search with the 1+ε trick (`search::pns::dfpn`). The
//! proof-number family runs it (`registry::pn`: its options, the probe plan of an exact value,
//! proof certificates, `analyse=all`).

crate::registry::pn::proof_number!(
    /// `dfpn`: depth-first proof-number search.
    Dfpn,
    "dfpn",
    Dfpn
);
