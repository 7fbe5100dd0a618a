//! The settings of a job as the code reads them: each option or game parameter is declared once
//! as a [`Spec`] (name, kind, bounds, typed default, help), read through [`Opts`] (which checks
//! the bound, gives the declared default when the setting is absent, and remembers what was
//! read, so unknown keys are refused), and a bad one is a [`SolveError::BadInput`] with one line
//! naming it. A default the code computes (the runner's threads) is [`DefaultValue::Depends`],
//! and only such a setting takes a default from the code ([`Opts::uint_or`]). Games declare
//! their parameters with these types; the registry declares the kernel families' options.

use crate::wire::Settings;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::str::FromStr;

/// Why a job or task could not give a result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SolveError {
    /// The job is wrong: unknown game or algorithm, illegal position, malformed option,
    /// unsatisfiable limit. CLI exit status 2, HTTP 400. The message is one line.
    #[error("{0}")]
    BadInput(String),
    /// The kernel failed (a bug, or a resource it could not get). HTTP 500; the task is retried.
    #[error("internal error: {0}")]
    Internal(String),
}

impl SolveError {
    /// A bad-input error.
    pub fn bad(msg: impl Into<String>) -> Self {
        SolveError::BadInput(crate::model::one_line(&msg.into()))
    }
}

/// What values a setting takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A whole number in `min..=max`.
    UInt {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A finite number in `min..=max`.
    Float {
        /// Smallest accepted.
        min: f64,
        /// Largest accepted.
        max: f64,
    },
    /// `true` or `false`.
    Bool,
    /// A word or a value in the game's notation, checked by the family that reads it.
    Text,
    /// One of these words.
    Choice(&'static [&'static str]),
}

/// A setting's default: the value the code reads when the setting is not given, which the
/// README, `--help`, `GET /v1/options` and `/openapi.json` print.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    /// A whole number.
    UInt(u64),
    /// A number.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A word: a choice, or a text in the game's notation.
    Word(&'static str),
    /// No value: the setting is off unless given (the text says what that means).
    Unset(&'static str),
    /// Set by the code from the runner, the game or other settings, as the text says.
    Depends(&'static str),
}

impl std::fmt::Display for DefaultValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

impl DefaultValue {
    /// As people read it.
    pub fn text(&self) -> String {
        match *self {
            DefaultValue::UInt(v) => v.to_string(),
            DefaultValue::Float(x) => fmt_f64(x),
            DefaultValue::Bool(b) => b.to_string(),
            DefaultValue::Word(t) | DefaultValue::Unset(t) | DefaultValue::Depends(t) => t.into(),
        }
    }

    /// As a JSON value, for the defaults that are values (not [`DefaultValue::Unset`] or
    /// [`DefaultValue::Depends`]).
    pub fn json(&self) -> Option<serde_json::Value> {
        match *self {
            DefaultValue::UInt(v) => Some(v.into()),
            DefaultValue::Float(x) => Some(x.into()),
            DefaultValue::Bool(b) => Some(b.into()),
            DefaultValue::Word(t) => Some(t.into()),
            DefaultValue::Unset(_) | DefaultValue::Depends(_) => None,
        }
    }

    /// Whether the code reads this default as a value (not computed, not unset).
    pub fn is_value(&self) -> bool {
        self.json().is_some()
    }
}

/// One declared option or game parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    /// The key, as in `KEY=VALUE`.
    pub name: &'static str,
    /// Values and bounds.
    pub kind: Kind,
    /// The default: the value the code reads, or what it means when absent.
    pub default: DefaultValue,
    /// What it does, one line.
    pub help: &'static str,
    /// Why the bound is where it is, one line (empty for unbounded kinds).
    pub why: &'static str,
    /// The algorithms of the family it applies to; empty: all of them.
    pub only: &'static [&'static str],
}

impl Spec {
    /// A setting of any kind, for all the algorithms of its family (what the constructors
    /// below share).
    const fn of(
        name: &'static str,
        kind: Kind,
        default: DefaultValue,
        help: &'static str,
        why: &'static str,
    ) -> Spec {
        Spec {
            name,
            kind,
            default,
            help,
            why,
            only: &[],
        }
    }

    /// A whole-number setting.
    pub const fn uint(
        name: &'static str,
        min: u64,
        max: u64,
        default: DefaultValue,
        help: &'static str,
        why: &'static str,
    ) -> Spec {
        Spec::of(name, Kind::UInt { min, max }, default, help, why)
    }

    /// A number setting.
    pub const fn float(
        name: &'static str,
        min: f64,
        max: f64,
        default: DefaultValue,
        help: &'static str,
        why: &'static str,
    ) -> Spec {
        Spec::of(name, Kind::Float { min, max }, default, help, why)
    }

    /// A boolean setting.
    pub const fn flag(name: &'static str, default: bool, help: &'static str) -> Spec {
        Spec::of(name, Kind::Bool, DefaultValue::Bool(default), help, "")
    }

    /// A text setting (a value in the game's notation, a name).
    pub const fn text(name: &'static str, default: DefaultValue, help: &'static str) -> Spec {
        Spec::of(name, Kind::Text, default, help, "")
    }

    /// A setting that is one of `choices`, `default` when absent.
    pub const fn choice(
        name: &'static str,
        choices: &'static [&'static str],
        default: DefaultValue,
        help: &'static str,
    ) -> Spec {
        Spec::of(name, Kind::Choice(choices), default, help, "")
    }

    /// The same setting with another default.
    pub const fn with_default(mut self, default: DefaultValue) -> Spec {
        self.default = default;
        self
    }

    /// The same setting with another meaning (the same setting as another family reads it).
    pub const fn with_help(mut self, help: &'static str) -> Spec {
        self.help = help;
        self
    }

    /// The same setting, for these algorithms of its family only.
    pub const fn for_algorithms(mut self, only: &'static [&'static str]) -> Spec {
        self.only = only;
        self
    }

    /// Whether it applies to `algorithm`.
    pub fn applies_to(&self, algorithm: &str) -> bool {
        self.only.is_empty() || self.only.contains(&algorithm)
    }

    /// Whether it is a number with bounds.
    pub fn is_numeric(&self) -> bool {
        matches!(self.kind, Kind::UInt { .. } | Kind::Float { .. })
    }

    /// For numeric settings: the values at its bounds (accepted) and the values just past them
    /// (refused), as `KEY=VALUE` texts would carry them. `None` for other kinds.
    pub fn edges(&self) -> Option<Edges> {
        match self.kind {
            Kind::UInt { min, max } => Some(Edges {
                accepted: vec![min.to_string(), max.to_string()],
                refused: min
                    .checked_sub(1)
                    .into_iter()
                    .chain(max.checked_add(1))
                    .map(|v| v.to_string())
                    .collect(),
            }),
            Kind::Float { min, max } => {
                // Just past: one part in a million beyond (or 1e-6 beyond a bound of 0).
                let past = |b: f64, dir: f64| {
                    let d = (b.abs() * 1e-6).max(1e-6);
                    b + dir * d
                };
                Some(Edges {
                    accepted: vec![fmt_f64(min), fmt_f64(max)],
                    refused: vec![fmt_f64(past(min, -1.0)), fmt_f64(past(max, 1.0))],
                })
            }
            Kind::Bool | Kind::Text | Kind::Choice(_) => None,
        }
    }

    /// The bound as people read it ("1 to 512").
    pub fn range_text(&self) -> String {
        match self.kind {
            Kind::UInt { min, max } if max == u64::MAX => format!("at least {min}"),
            Kind::UInt { min, max } => format!("{min} to {max}"),
            Kind::Float { min, max } => format!("{} to {}", fmt_f64(min), fmt_f64(max)),
            Kind::Bool => "true or false".into(),
            Kind::Text => "text".into(),
            Kind::Choice(words) => match words.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => words.join(""),
            },
        }
    }
}

/// Values at and just past a numeric setting's bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edges {
    /// The bounds themselves: accepted.
    pub accepted: Vec<String>,
    /// Just below the minimum and just above the maximum: refused.
    pub refused: Vec<String>,
}

fn fmt_f64(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Typed access to `KEY=VALUE` settings that remembers which keys were read, so that unknown
/// keys are reported ([`Opts::finish`]) instead of silently ignored.
pub struct Opts<'a> {
    map: &'a Settings,
    what: &'static str,
    used: RefCell<BTreeSet<&'a str>>,
    /// Every key looked up, given or not: what an unknown key's error offers instead.
    asked: RefCell<BTreeSet<String>>,
}

impl<'a> Opts<'a> {
    /// Wraps settings; `what` names them in errors ("option", "game parameter").
    pub fn new(map: &'a Settings, what: &'static str) -> Self {
        Opts {
            map,
            what,
            used: RefCell::new(BTreeSet::new()),
            asked: RefCell::new(BTreeSet::new()),
        }
    }
    /// The text of `key`, if given (marked read).
    fn raw(&self, key: &str) -> Option<&'a str> {
        if !self.asked.borrow().contains(key) {
            self.asked.borrow_mut().insert(key.to_string());
        }
        let (k, v) = self.map.get_key_value(key)?;
        self.used.borrow_mut().insert(k.as_str());
        Some(v.as_str())
    }
    /// Whether `key` is given (not marked read).
    pub fn given(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }
    /// `key` parsed as `T`, if given; a malformed value is a bad-input error naming the key.
    fn get<T: FromStr>(&self, key: &str) -> Result<Option<T>, SolveError> {
        match self.raw(key) {
            None => Ok(None),
            Some(text) => text.trim().parse::<T>().map(Some).map_err(|_| {
                SolveError::bad(format!(
                    "{} '{key}={}' is malformed (expected {})",
                    self.what,
                    clip(text),
                    short_type_name::<T>()
                ))
            }),
        }
    }
    /// The whole-number setting `spec`, if given, checked against its bounds: a malformed or
    /// out-of-bounds value is a bad-input error naming the key and the bounds.
    pub fn uint<T: TryFrom<u64>>(&self, spec: &Spec) -> Result<Option<T>, SolveError> {
        let Kind::UInt { min, max } = spec.kind else {
            return Err(self.wrong_kind(spec, "a whole number"));
        };
        let Some((v, text)) = self.parsed::<u64>(spec, "a whole number")? else {
            return Ok(None);
        };
        if v < min || v > max {
            return Err(self.out_of_bounds(spec, text));
        }
        T::try_from(v)
            .map(Some)
            .map_err(|_| self.out_of_bounds(spec, text))
    }
    /// The whole-number setting `spec`, or its declared default.
    pub fn uint_value<T: TryFrom<u64>>(&self, spec: &Spec) -> Result<T, SolveError> {
        self.or_default(spec, self.uint(spec)?, |d| match d {
            DefaultValue::UInt(v) => T::try_from(v).ok(),
            _ => None,
        })
    }
    /// The whole-number setting `spec`, or `default`: for a default the code computes
    /// ([`DefaultValue::Depends`]); a declared value is read by [`Opts::uint_value`].
    pub fn uint_or<T: TryFrom<u64>>(&self, spec: &Spec, default: T) -> Result<T, SolveError> {
        self.computed(spec)?;
        Ok(self.uint(spec)?.unwrap_or(default))
    }
    /// A declared default that is not of the setting's kind, or is not a value: a bug in the
    /// declaration, not bad input.
    fn no_default(&self, spec: &Spec) -> SolveError {
        SolveError::Internal(format!(
            "'{}' has no default value of its kind ({:?})",
            spec.name, spec.default
        ))
    }
    /// Refuses to take a default from the code for a setting that declares one: the
    /// declaration is what the documents print, so it must be what the code reads.
    fn computed(&self, spec: &Spec) -> Result<(), SolveError> {
        if spec.default.is_value() {
            return Err(SolveError::Internal(format!(
                "'{}' declares its default ({}): read it from the declaration",
                spec.name,
                spec.default.text()
            )));
        }
        Ok(())
    }
    /// The number setting `spec`, if given, finite and within its bounds.
    pub fn float(&self, spec: &Spec) -> Result<Option<f64>, SolveError> {
        let Kind::Float { min, max } = spec.kind else {
            return Err(self.wrong_kind(spec, "a number"));
        };
        let Some((v, text)) = self.parsed::<f64>(spec, "a number")? else {
            return Ok(None);
        };
        if !(v.is_finite() && v >= min && v <= max) {
            return Err(self.out_of_bounds(spec, text));
        }
        Ok(Some(v))
    }
    /// The setting `spec` parsed as `V` with its text, if given; malformed text is a bad-input
    /// error naming the key, what was `expected` and the bounds.
    fn parsed<V: FromStr>(
        &self,
        spec: &Spec,
        expected: &str,
    ) -> Result<Option<(V, &'a str)>, SolveError> {
        let Some(text) = self.raw(spec.name) else {
            return Ok(None);
        };
        let v = text.trim().parse().map_err(|_| {
            SolveError::bad(format!(
                "{} '{}={}' is malformed (expected {expected}, {})",
                self.what,
                spec.name,
                clip(text),
                spec.range_text()
            ))
        })?;
        Ok(Some((v, text)))
    }
    /// `given`, else the default `spec` declares, as `declared` reads it; a default of another
    /// kind, or none: [`Opts::no_default`]'s error.
    fn or_default<T>(
        &self,
        spec: &Spec,
        given: Option<T>,
        declared: impl FnOnce(DefaultValue) -> Option<T>,
    ) -> Result<T, SolveError> {
        match given {
            Some(v) => Ok(v),
            None => declared(spec.default).ok_or_else(|| self.no_default(spec)),
        }
    }
    /// A spec read as a kind it is not: a bug in the family, not bad input.
    fn wrong_kind(&self, spec: &Spec, kind: &str) -> SolveError {
        SolveError::Internal(format!("'{}' is not {kind}", spec.name))
    }
    /// The number setting `spec`, or its declared default.
    pub fn float_value(&self, spec: &Spec) -> Result<f64, SolveError> {
        self.or_default(spec, self.float(spec)?, |d| match d {
            DefaultValue::Float(x) => Some(x),
            _ => None,
        })
    }
    /// The boolean setting `spec`, if given.
    pub fn flag_given(&self, spec: &Spec) -> Result<Option<bool>, SolveError> {
        if spec.kind != Kind::Bool {
            return Err(self.wrong_kind(spec, "true or false"));
        }
        self.get(spec.name)
    }
    /// The boolean setting `spec`, or its declared default.
    pub fn flag(&self, spec: &Spec) -> Result<bool, SolveError> {
        self.or_default(spec, self.flag_given(spec)?, |d| match d {
            DefaultValue::Bool(b) => Some(b),
            _ => None,
        })
    }
    /// The text setting `spec`, if given.
    pub fn text(&self, spec: &Spec) -> Option<&'a str> {
        self.raw(spec.name)
    }
    /// The text setting `spec`, or its declared default word.
    pub fn text_value(&self, spec: &Spec) -> Result<&'a str, SolveError> {
        match (self.raw(spec.name), spec.default) {
            (Some(t), _) => Ok(t),
            (None, DefaultValue::Word(w)) => Ok(w),
            (None, _) => Err(self.no_default(spec)),
        }
    }
    /// The choice setting `spec`, if given: one of its words (spaces around it ignored).
    pub fn choice_given(&self, spec: &Spec) -> Result<Option<&'static str>, SolveError> {
        let Kind::Choice(words) = spec.kind else {
            return Err(self.wrong_kind(spec, "a choice"));
        };
        let Some(text) = self.raw(spec.name) else {
            return Ok(None);
        };
        match words.iter().find(|w| **w == text.trim()) {
            Some(w) => Ok(Some(w)),
            None => Err(SolveError::bad(format!(
                "{} '{}={}' is malformed (expected {})",
                self.what,
                spec.name,
                clip(text.trim()),
                spec.range_text()
            ))),
        }
    }
    /// The choice setting `spec`, or its declared default.
    pub fn choice(&self, spec: &Spec) -> Result<&'static str, SolveError> {
        self.or_default(spec, self.choice_given(spec)?, |d| match d {
            DefaultValue::Word(w) => Some(w),
            _ => None,
        })
    }
    fn out_of_bounds(&self, spec: &Spec, text: &str) -> SolveError {
        SolveError::bad(format!(
            "{} '{}={}' is out of bounds ({}: {})",
            self.what,
            spec.name,
            clip(text.trim()),
            spec.range_text(),
            spec.why
        ))
    }
    /// Marks `key` as known without reading it (handled elsewhere, e.g. by the planner).
    pub fn allow(&self, key: &str) {
        let _ = self.raw(key);
    }
    /// Fails if any setting was never read: it is unknown to this game or algorithm.
    pub fn finish(&self) -> Result<(), SolveError> {
        let used = self.used.borrow();
        let unknown: Vec<String> = self
            .map
            .keys()
            .map(String::as_str)
            .filter(|k| !used.contains(k))
            .map(clip)
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let asked = self.asked.borrow();
        let known: Vec<&str> = asked.iter().map(String::as_str).collect();
        let guess = match unknown.iter().find_map(|u| closest(u, &known)) {
            Some(k) => format!("did you mean '{k}'? "),
            None => String::new(),
        };
        let hint = if known.is_empty() {
            format!(" ({guess}none is read here)")
        } else {
            format!(" ({guess}known here: {})", known.join(", "))
        };
        Err(SolveError::bad(format!(
            "unknown {} '{}' here{hint}",
            self.what,
            unknown.join("', '")
        )))
    }
}

/// The key of `known` nearest to `typed` if it is a likely typo: at most a third of its
/// letters (and at least one) changed, added, removed or swapped.
fn closest<'k>(typed: &str, known: &[&'k str]) -> Option<&'k str> {
    let limit = (typed.chars().count() / 3).max(1);
    known
        .iter()
        .map(|k| (edit_distance(typed, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k)
}

/// Optimal string alignment distance (Levenshtein with adjacent swaps), on characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// At most 40 characters of a user's text, control characters escaped, for error messages.
fn clip(text: &str) -> String {
    super::excerpt(text)
}

fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    match full {
        "bool" => "true or false",
        "f64" | "f32" => "a number",
        "i32" | "i64" => "an integer",
        "u8" | "u16" | "u32" | "u64" | "usize" => "a non-negative integer",
        _ => full.rsplit("::").next().unwrap_or(full),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Settings {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// An unknown key's error names it, the key it probably meant, and the keys read here.
    #[test]
    fn unknown_keys_are_named_with_a_guess_and_the_known_ones() {
        let map = settings(&[("dpeth", "3")]);
        let o = Opts::new(&map, "option");
        assert_eq!(o.get::<u32>("depth").unwrap(), None);
        assert_eq!(o.get::<bool>("weak").unwrap(), None);
        let e = o.finish().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown option 'dpeth' here (did you mean 'depth'? known here: depth, weak)"
        );
        // Nothing near: no guess, still the list.
        let map = settings(&[("zzz", "1")]);
        let o = Opts::new(&map, "option");
        o.allow("depth");
        let e = o.finish().unwrap_err().to_string();
        assert_eq!(e, "unknown option 'zzz' here (known here: depth)");
        // Nothing read at all.
        let o = Opts::new(&map, "game parameter");
        let e = o.finish().unwrap_err().to_string();
        assert_eq!(e, "unknown game parameter 'zzz' here (none is read here)");
    }

    #[test]
    fn edit_distance_counts_swaps_as_one() {
        assert_eq!(edit_distance("depth", "depth"), 0);
        assert_eq!(edit_distance("dpeth", "depth"), 1);
        assert_eq!(edit_distance("dept", "depth"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("budgte", &["budget", "leaf"]), Some("budget"));
        assert_eq!(closest("x", &["budget", "leaf"]), None);
    }
}
