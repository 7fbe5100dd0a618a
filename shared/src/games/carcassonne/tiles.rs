//! The 24 tile types of the Carcassonne base game and their features, as edge and field segments.
//!
//! 72 tiles of 24 types, the start tile (type `D`) included, counted and lettered `A`..`X` as in
//! the Hans im Glück rulebook's tile overview, tabulated by Russ Williams, "Carcassonne Tile
//! Distribution" (the tests check its totals); sources and the segment rules: docs/games.md.
//!
//! A tile edge is cut into three *slots*, numbered clockwise from the north-west corner:
//! ```text
//!          0   1   2          0 NNW, 1 N, 2 NNE, 3 ENE, 4 E, 5 ESE,
//!       +---+---+---+         6 SSE, 7 S, 8 SSW, 9 WSW, 10 W, 11 WNW
//!    11 |           | 3
//!    10 |           | 4       side s (0 N, 1 E, 2 S, 3 W) holds slots 3s, 3s+1, 3s+2;
//!     9 |           | 5       its middle slot 3s+1 decides the edge kind (city, road, field)
//!       +---+---+---+
//!          8   7   6
//! ```
//! A *segment* is one feature piece of one tile with the slots it touches: a city all three slots
//! of its edges, a road the middle slot, fields the rest. A quarter turn clockwise moves slot `i`
//! to `i + 3 (mod 12)`; slot `3s + k` meets slot `3o + 2 - k` of the neighbour across side `s`,
//! `o = s + 2 (mod 4)`.

/// What a side of a tile shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Edge {
    /// Field (meadow).
    Field,
    /// Road.
    Road,
    /// City.
    City,
}

/// What a segment is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// City piece.
    City,
    /// Road piece.
    Road,
    /// Field piece.
    Field,
    /// Monastery (touches no slot).
    Monastery,
}

/// Number of tile types.
pub const TYPES: usize = 24;
/// Most segments on one tile (type `X`: four roads and four fields).
pub const MAX_SEGS: usize = 8;
/// Number of tiles in the base game, the start tile included.
pub const TOTAL_TILES: usize = 72;
/// The type of the start tile (`D`: city cap with a straight road).
pub const START_TYPE: u8 = 3;

/// Compass names of the 12 slots, in slot order.
pub const SLOT_NAMES: [&str; 12] = [
    "NNW", "N", "NNE", "ENE", "E", "ESE", "SSE", "S", "SSW", "WSW", "W", "WNW",
];

/// One tile type as printed, in its reference orientation (rotation 0).
struct Spec {
    count: u8,
    /// Segments: kind, slots touched, shield.
    segs: &'static [(Kind, &'static [u8], bool)],
}

use Kind::{City as C, Field as F, Monastery as M, Road as R};

/// The base game's tile types `A`..`X`; see the module doc for the counts' source.
const SPECS: [Spec; TYPES] = [
    // A: monastery, road to the south.
    Spec {
        count: 2,
        segs: &[
            (M, &[], false),
            (R, &[7], false),
            (F, &[0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11], false),
        ],
    },
    // B: monastery in a field.
    Spec {
        count: 4,
        segs: &[
            (M, &[], false),
            (F, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], false),
        ],
    },
    // C: city on all four sides, shield.
    Spec {
        count: 1,
        segs: &[(C, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], true)],
    },
    // D: city cap north, straight road east-west (the start tile; 3 in the bag + 1 start).
    Spec {
        count: 4,
        segs: &[
            (C, &[0, 1, 2], false),
            (R, &[4, 10], false),
            (F, &[3, 11], false),
            (F, &[5, 6, 7, 8, 9], false),
        ],
    },
    // E: city cap north.
    Spec {
        count: 5,
        segs: &[
            (C, &[0, 1, 2], false),
            (F, &[3, 4, 5, 6, 7, 8, 9, 10, 11], false),
        ],
    },
    // F: city from east to west through the middle, shield.
    Spec {
        count: 2,
        segs: &[
            (C, &[3, 4, 5, 9, 10, 11], true),
            (F, &[0, 1, 2], false),
            (F, &[6, 7, 8], false),
        ],
    },
    // G: as F without shield.
    Spec {
        count: 1,
        segs: &[
            (C, &[3, 4, 5, 9, 10, 11], false),
            (F, &[0, 1, 2], false),
            (F, &[6, 7, 8], false),
        ],
    },
    // H: two separate city caps, east and west; one field between them.
    Spec {
        count: 3,
        segs: &[
            (C, &[3, 4, 5], false),
            (C, &[9, 10, 11], false),
            (F, &[0, 1, 2, 6, 7, 8], false),
        ],
    },
    // I: two separate city caps on adjacent sides, east and south.
    Spec {
        count: 2,
        segs: &[
            (C, &[3, 4, 5], false),
            (C, &[6, 7, 8], false),
            (F, &[9, 10, 11, 0, 1, 2], false),
        ],
    },
    // J: city cap north, road curving east to south.
    Spec {
        count: 3,
        segs: &[
            (C, &[0, 1, 2], false),
            (R, &[4, 7], false),
            (F, &[5, 6], false),
            (F, &[8, 9, 10, 11, 3], false),
        ],
    },
    // K: city cap north, road curving south to west (J's mirror image).
    Spec {
        count: 3,
        segs: &[
            (C, &[0, 1, 2], false),
            (R, &[7, 10], false),
            (F, &[8, 9], false),
            (F, &[11, 3, 4, 5, 6], false),
        ],
    },
    // L: city cap north, roads east, south and west ending at a crossing.
    Spec {
        count: 3,
        segs: &[
            (C, &[0, 1, 2], false),
            (R, &[4], false),
            (R, &[7], false),
            (R, &[10], false),
            (F, &[5, 6], false),
            (F, &[8, 9], false),
            (F, &[11, 3], false),
        ],
    },
    // M: city on north and west joined diagonally, shield.
    Spec {
        count: 2,
        segs: &[
            (C, &[9, 10, 11, 0, 1, 2], true),
            (F, &[3, 4, 5, 6, 7, 8], false),
        ],
    },
    // N: as M without shield.
    Spec {
        count: 3,
        segs: &[
            (C, &[9, 10, 11, 0, 1, 2], false),
            (F, &[3, 4, 5, 6, 7, 8], false),
        ],
    },
    // O: diagonal city north-west, shield, road curving east to south.
    Spec {
        count: 2,
        segs: &[
            (C, &[9, 10, 11, 0, 1, 2], true),
            (R, &[4, 7], false),
            (F, &[5, 6], false),
            (F, &[3, 8], false),
        ],
    },
    // P: as O without shield.
    Spec {
        count: 3,
        segs: &[
            (C, &[9, 10, 11, 0, 1, 2], false),
            (R, &[4, 7], false),
            (F, &[5, 6], false),
            (F, &[3, 8], false),
        ],
    },
    // Q: city on west, north and east, shield.
    Spec {
        count: 1,
        segs: &[
            (C, &[9, 10, 11, 0, 1, 2, 3, 4, 5], true),
            (F, &[6, 7, 8], false),
        ],
    },
    // R: as Q without shield.
    Spec {
        count: 3,
        segs: &[
            (C, &[9, 10, 11, 0, 1, 2, 3, 4, 5], false),
            (F, &[6, 7, 8], false),
        ],
    },
    // S: city on west, north and east, shield, road from the south ending at the city.
    Spec {
        count: 2,
        segs: &[
            (C, &[9, 10, 11, 0, 1, 2, 3, 4, 5], true),
            (R, &[7], false),
            (F, &[6], false),
            (F, &[8], false),
        ],
    },
    // T: as S without shield.
    Spec {
        count: 1,
        segs: &[
            (C, &[9, 10, 11, 0, 1, 2, 3, 4, 5], false),
            (R, &[7], false),
            (F, &[6], false),
            (F, &[8], false),
        ],
    },
    // U: straight road north-south.
    Spec {
        count: 8,
        segs: &[
            (R, &[1, 7], false),
            (F, &[2, 3, 4, 5, 6], false),
            (F, &[8, 9, 10, 11, 0], false),
        ],
    },
    // V: road curving south to west.
    Spec {
        count: 9,
        segs: &[
            (R, &[7, 10], false),
            (F, &[8, 9], false),
            (F, &[11, 0, 1, 2, 3, 4, 5, 6], false),
        ],
    },
    // W: roads east, south and west ending at a crossing.
    Spec {
        count: 4,
        segs: &[
            (R, &[4], false),
            (R, &[7], false),
            (R, &[10], false),
            (F, &[5, 6], false),
            (F, &[8, 9], false),
            (F, &[11, 0, 1, 2, 3], false),
        ],
    },
    // X: four roads ending at a crossing.
    Spec {
        count: 1,
        segs: &[
            (R, &[1], false),
            (R, &[4], false),
            (R, &[7], false),
            (R, &[10], false),
            (F, &[2, 3], false),
            (F, &[5, 6], false),
            (F, &[8, 9], false),
            (F, &[11, 0], false),
        ],
    },
];

/// One tile type in one rotation, with everything the rules look up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Oriented {
    /// Edge kind of each side (N, E, S, W).
    pub edges: [Edge; 4],
    /// Number of segments.
    pub nseg: u8,
    /// Kind of each segment.
    pub kind: [Kind; MAX_SEGS],
    /// Slots of each segment as a 12-bit mask.
    pub mask: [u16; MAX_SEGS],
    /// Whether a city segment carries a shield.
    pub shield: [bool; MAX_SEGS],
    /// Number of sides a city or road segment leaves open (its edges); 0 for the others.
    pub sides: [u8; MAX_SEGS],
    /// For a field segment: bit `j` set when it borders city segment `j` of this tile.
    pub field_cities: [u8; MAX_SEGS],
    /// The segment holding each slot.
    pub slot_seg: [u8; 12],
    /// The monastery segment, if any.
    pub monastery: Option<u8>,
}

/// All tile types in all rotations, with the bag counts and the distinct rotations.
#[derive(Clone, Debug)]
pub struct Tiles {
    /// `oriented[t][r]`: type `t` turned `r` quarter turns clockwise.
    pub oriented: Vec<[Oriented; 4]>,
    /// Tiles of each type in the whole game (the start tile included in type `D`).
    pub count: [u8; TYPES],
    /// `canon[t][r]`: the first rotation of type `t` that looks exactly like rotation `r`.
    pub canon: [[u8; 4]; TYPES],
}

fn rotate_mask(mask: u16, r: u8) -> u16 {
    let s = 3 * r as u32;
    ((mask << s) | (mask >> (12 - s))) & 0xFFF
}

fn orient(spec: &Spec, r: u8) -> Oriented {
    let mut o = Oriented {
        edges: [Edge::Field; 4],
        nseg: spec.segs.len() as u8,
        kind: [Kind::Field; MAX_SEGS],
        mask: [0; MAX_SEGS],
        shield: [false; MAX_SEGS],
        sides: [0; MAX_SEGS],
        field_cities: [0; MAX_SEGS],
        slot_seg: [u8::MAX; 12],
        monastery: None,
    };
    for (i, &(kind, slots, shield)) in spec.segs.iter().enumerate() {
        let mask0 = slots.iter().fold(0u16, |m, &s| m | 1 << s);
        let mask = if r == 0 { mask0 } else { rotate_mask(mask0, r) };
        o.kind[i] = kind;
        o.mask[i] = mask;
        o.shield[i] = shield;
        if kind == Kind::Monastery {
            o.monastery = Some(i as u8);
        }
        for slot in 0..12 {
            if mask >> slot & 1 == 1 {
                o.slot_seg[slot] = i as u8;
            }
        }
        for side in 0..4 {
            if mask >> (3 * side + 1) & 1 == 1 {
                match kind {
                    Kind::City => {
                        o.edges[side] = Edge::City;
                        o.sides[i] += 1;
                    }
                    Kind::Road => {
                        o.edges[side] = Edge::Road;
                        o.sides[i] += 1;
                    }
                    _ => {}
                }
            }
        }
    }
    for i in 0..spec.segs.len() {
        if o.kind[i] != Kind::Field {
            continue;
        }
        for slot in 0..12usize {
            if o.mask[i] >> slot & 1 == 0 {
                continue;
            }
            for nb in [(slot + 11) % 12, (slot + 1) % 12] {
                let j = o.slot_seg[nb] as usize;
                if j < MAX_SEGS && o.kind[j] == Kind::City {
                    o.field_cities[i] |= 1 << j;
                }
            }
        }
    }
    o
}

/// Whether two orientations are the same picture (same segments with the same slots).
fn same_picture(a: &Oriented, b: &Oriented) -> bool {
    let key = |o: &Oriented| {
        let mut v: Vec<(u16, bool, u8)> = (0..o.nseg as usize)
            .map(|i| (o.mask[i], o.shield[i], o.kind[i] as u8))
            .collect();
        v.sort_unstable();
        v
    };
    key(a) == key(b)
}

impl Tiles {
    /// Builds the tables of the base game.
    pub fn base_game() -> Self {
        let mut oriented = Vec::with_capacity(TYPES);
        let mut count = [0u8; TYPES];
        let mut canon = [[0u8; 4]; TYPES];
        for (t, spec) in SPECS.iter().enumerate() {
            let rots = [0, 1, 2, 3].map(|r| orient(spec, r));
            for r in 0..4 {
                canon[t][r] = (0..=r)
                    .find(|&q| same_picture(&rots[q], &rots[r]))
                    .unwrap_or(r) as u8;
            }
            oriented.push(rots);
            count[t] = spec.count;
        }
        Tiles {
            oriented,
            count,
            canon,
        }
    }

    /// The orientation of type `t` turned `r` quarter turns.
    #[inline(always)]
    pub fn get(&self, t: u8, r: u8) -> &Oriented {
        &self.oriented[t as usize][r as usize]
    }
}

/// The letter of tile type `t`.
pub fn letter(t: u8) -> char {
    (b'A' + t) as char
}

/// The type of letter `c`, if it names one.
pub fn type_of_letter(c: char) -> Option<u8> {
    let c = c.to_ascii_uppercase();
    if c.is_ascii_uppercase() && (c as u8 - b'A') < TYPES as u8 {
        Some(c as u8 - b'A')
    } else {
        None
    }
}
