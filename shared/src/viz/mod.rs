//! Pictures of the search: line charts over time and bar charts, as standalone SVG text.
//!
//! Hand-written SVG rather than a plotting crate (plotters was considered): the charts are
//! simple (a few series, axes with round ticks, a legend), the output must not depend on system
//! fonts (plotters lays text out with font metrics) or on anything fetched at run time, the
//! dashboard and its browser test read the charts' classes (`gs-series`, `gs-bar`,
//! `gs-tick-x`, `gs-tick-y`), and the same code serves the coordinator's dashboard and
//! `gamesolver solve --plot`. Text is escaped; non-finite points are skipped; an empty series
//! gives a chart that says "no data yet" instead of failing.
//!
//! Axes are never degenerate: a single instant spans a second from 0, a flat line sits in a
//! range around its value (counts never below 0), and tick labels ([`tick_labels`]) carry the
//! decimals their step needs and SI prefixes from ten thousand on, so that no two are the same
//! ("16.4200M", "16.4202M", not five times "1.642e7"); the left margin grows with the widest
//! label, so labels never run into the axis title.
//!
//! [`progress_plot`] chooses the chart that matters for a job from its progress history:
//! bounds closing in (threshold probes, proof-number search), the best score climbing (NRPA,
//! NMCS), the visit distribution of root moves (MCTS), or work done over time otherwise.

pub mod board;

use std::fmt::Write;

/// One line of a line chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// CSS colour.
    pub color: &'static str,
    /// Points (x, y).
    pub points: Vec<(f64, f64)>,
    /// Draw as steps (value holds until the next point), as bounds and best scores do.
    pub steps: bool,
}

/// Colours of the series, in order (colour-blind safe palette by Okabe and Ito).
pub const PALETTE: [&str; 6] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
];

const W: f64 = 640.0;
const H: f64 = 360.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 48.0;

/// Escapes text for SVG.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Round tick positions covering `[lo, hi]` (about `n` of them).
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// One number for a label or a tooltip: integers with thousands separators below a million,
/// SI prefixes (k, M, G, T) above, others to 4 significant digits.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.abs() >= 1e6 {
        let (f, p) = si(v.abs());
        let t = format!("{:.3}", v / f);
        return format!("{}{p}", trim_zeros(&t));
    }
    if v.fract() == 0.0 {
        return thousands(v as i64);
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    trim_zeros(&format!("{v:.digits$}")).to_string()
}

/// The SI factor and prefix for a magnitude `a` (1 and "" below a thousand).
fn si(a: f64) -> (f64, &'static str) {
    for (f, p) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if a >= f {
            return (f, p);
        }
    }
    (1.0, "")
}

fn trim_zeros(t: &str) -> &str {
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.')
    } else {
        t
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Labels of the ticks of one axis (evenly spaced, as [`ticks`] gives them): short (SI prefixes
/// from ten thousand on), with just the decimals the step needs, so that no two are the same.
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let step = ticks
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(f64::INFINITY, f64::min);
    let top = ticks.iter().fold(0f64, |m, t| m.max(t.abs()));
    let (f, p) = if top >= 1e4 { si(top) } else { (1.0, "") };
    // Steps are 1, 2 or 5 times a power of ten: the power's decimals write every tick exactly.
    let decimals = if step.is_finite() && step > 0.0 {
        ((-((step / f).log10() + 1e-9).floor()).max(0.0) as usize).min(9)
    } else {
        0
    };
    ticks
        .iter()
        .map(|&t| {
            let v = t / f;
            if v.abs() < step / f * 1e-6 {
                return "0".to_string();
            }
            let text = if p.is_empty() && decimals == 0 && v.abs() < 1e15 {
                thousands(v.round() as i64)
            } else {
                format!("{v:.decimals$}")
            };
            format!("{text}{p}")
        })
        .collect()
}

/// Pixels a label of `text` takes at the charts' 12 px font (an estimate: no font is measured).
fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * 7.0
}

fn header(out: &mut String, title: &str, kind: &str) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" class="gs-plot" data-kind="{kind}" font-family="sans-serif" font-size="12"><rect width="{W}" height="{H}" fill="#ffffff"/><text x="{x}" y="22" text-anchor="middle" font-size="15">{t}</text>"##,
        x = W / 2.0,
        t = escape(title)
    );
}

/// Ends a chart that has nothing to draw with a "no data yet" note.
fn no_data(out: &mut String) {
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" class="gs-empty">no data yet</text></svg>"#,
        W / 2.0,
        H / 2.0
    );
}

/// A line chart of `series` against a shared x axis.
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let mut out = String::new();
    header(&mut out, title, "line");
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if pts.is_empty() {
        no_data(&mut out);
        return out;
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in &pts {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    // Time axes start at 0; a single instant still spans a second.
    if x0 > 0.0 {
        x0 = 0.0;
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    // A flat line sits in the middle of a range around it (never a range of one value).
    // Counts never go below 0 on their axis.
    let counts = y0 >= 0.0;
    if y1 <= y0 {
        let d = (y0.abs() * 0.1).max(1.0);
        y0 -= d;
        y1 += d;
    }
    let pad = (y1 - y0) * 0.05;
    let (mut y0, y1) = (y0 - pad, y1 + pad);
    if counts && y0 < 0.0 {
        y0 = 0.0;
    }
    let mut y_ticks = ticks(y0, y1, 6);
    // Whole numbers (tasks, bounds, scores) get whole ticks: no "0.2 tasks".
    if pts.iter().all(|(_, y)| y.fract() == 0.0) {
        let whole: Vec<f64> = y_ticks
            .iter()
            .filter(|t| (*t - t.round()).abs() < 1e-9)
            .map(|t| t.round())
            .collect();
        if whole.len() >= 2 {
            y_ticks = whole;
        }
    }
    let y_labels = tick_labels(&y_ticks);
    let x_ticks = ticks(x0, x1, 6);
    let x_labels = tick_labels(&x_ticks);
    // Room for the widest tick label between the axis title and the axis.
    let left = y_labels
        .iter()
        .map(|l| text_width(l))
        .fold(0.0, f64::max)
        .max(24.0)
        + 40.0;
    let left = left.max(LEFT);
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (W - left - RIGHT);
    let py = |y: f64| H - BOTTOM - (y - y0) / (y1 - y0) * (H - TOP - BOTTOM);
    // Axes, grid and ticks.
    let _ = write!(out, r##"<g stroke="#cccccc" stroke-width="1">"##);
    for &t in &y_ticks {
        let _ = write!(
            out,
            r#"<line x1="{left}" x2="{}" y1="{y:.1}" y2="{y:.1}"/>"#,
            W - RIGHT,
            y = py(t)
        );
    }
    let _ = write!(out, "</g>");
    for (&t, label) in y_ticks.iter().zip(&y_labels) {
        let _ = write!(
            out,
            r#"<text class="gs-tick-y" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            left - 6.0,
            py(t) + 4.0,
            escape(label)
        );
    }
    for (&t, label) in x_ticks.iter().zip(&x_labels) {
        let _ = write!(
            out,
            r#"<text class="gs-tick-x" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            px(t),
            H - BOTTOM + 16.0,
            escape(label)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{left}" y1="{b}" x2="{r}" y2="{b}" stroke="#333333"/><line x1="{left}" y1="{TOP}" x2="{left}" y2="{b}" stroke="#333333"/>"##,
        b = H - BOTTOM,
        r = W - RIGHT
    );
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (left + W - RIGHT) / 2.0,
        H - 10.0,
        escape(x_label)
    );
    let _ = write!(
        out,
        r#"<text class="gs-axis-title" transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (TOP + H - BOTTOM) / 2.0,
        escape(y_label)
    );
    // Series.
    let mut legend_x = left;
    for (i, s) in series.iter().enumerate() {
        let mut d = String::new();
        let mut last: Option<(f64, f64)> = None;
        for &(x, y) in s
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
        {
            match last {
                None => {
                    let _ = write!(d, "M{:.1},{:.1}", px(x), py(y));
                }
                Some((_, ly)) if s.steps => {
                    let _ = write!(d, " L{:.1},{:.1} L{:.1},{:.1}", px(x), py(ly), px(x), py(y));
                }
                Some(_) => {
                    let _ = write!(d, " L{:.1},{:.1}", px(x), py(y));
                }
            }
            last = Some((x, y));
        }
        // A step series holds its last value to the end of the chart (the latest time).
        if let (true, Some((lx, ly))) = (s.steps, last) {
            if lx < x1 {
                let _ = write!(d, " L{:.1},{:.1}", px(x1), py(ly));
            }
        }
        if s.points.len() == 1 {
            if let Some((x, y)) = last {
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
                    px(x),
                    py(y),
                    s.color
                );
            }
        }
        let _ = write!(
            out,
            r#"<path class="gs-series" d="{d}" fill="none" stroke="{}" stroke-width="2"/>"#,
            s.color
        );
        // The legend: one row above the plot, so that it never covers a line.
        let lx = legend_x;
        legend_x += 30.0 + text_width(&s.name);
        if legend_x > W - RIGHT && i > 0 {
            continue;
        }
        let _ = write!(
            out,
            r#"<rect x="{}" y="{}" width="12" height="3" fill="{c}"/><text class="gs-legend" x="{}" y="{}">{}</text>"#,
            lx,
            TOP - 14.0,
            lx + 16.0,
            TOP - 10.0,
            escape(&s.name),
            c = s.color
        );
    }
    out.push_str("</svg>");
    out
}

/// A bar chart: one bar per (label, value), values >= 0.
pub fn bar_chart(title: &str, y_label: &str, bars: &[(String, f64)]) -> String {
    let mut out = String::new();
    header(&mut out, title, "bar");
    let bars: Vec<&(String, f64)> = bars
        .iter()
        .filter(|(_, v)| v.is_finite() && *v >= 0.0)
        .collect();
    if bars.is_empty() {
        no_data(&mut out);
        return out;
    }
    let top = bars.iter().map(|(_, v)| *v).fold(0.0, f64::max);
    // All zero: a scale of 0..1 (never one tick).
    let top = if top > 0.0 { top } else { 1.0 };
    let y_ticks = ticks(0.0, top * 1.05, 5);
    let y_ticks = if y_ticks.len() < 2 {
        vec![0.0, top]
    } else {
        y_ticks
    };
    let y_labels = tick_labels(&y_ticks);
    let scale = y_ticks.last().copied().unwrap_or(top).max(top);
    let left = (y_labels
        .iter()
        .map(|l| text_width(l))
        .fold(0.0, f64::max)
        .max(24.0)
        + 40.0)
        .max(LEFT);
    let slot = (W - left - RIGHT) / bars.len() as f64;
    let py = |y: f64| H - BOTTOM - y / scale * (H - TOP - BOTTOM);
    for (&t, label) in y_ticks.iter().zip(&y_labels) {
        let _ = write!(
            out,
            r##"<line x1="{left}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#cccccc"/><text class="gs-tick-y" x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            left - 6.0,
            py(t) + 4.0,
            escape(label),
            y = py(t)
        );
    }
    // Category labels only where they fit (about 7 px a character).
    let widest = bars.iter().map(|(l, _)| text_width(l)).fold(0.0, f64::max);
    let labelled = widest <= slot - 2.0;
    for (i, (label, v)) in bars.iter().enumerate() {
        let x = left + slot * i as f64 + slot * 0.15;
        let _ = write!(
            out,
            r#"<rect class="gs-bar" x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
            py(*v),
            slot * 0.7,
            (H - BOTTOM) - py(*v),
            PALETTE[0],
            escape(label),
            fmt_num(*v)
        );
        if labelled {
            let _ = write!(
                out,
                r#"<text class="gs-cat" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                x + slot * 0.35,
                H - BOTTOM + 16.0,
                escape(label)
            );
        }
    }
    let _ = write!(
        out,
        r##"<line x1="{left}" y1="{b}" x2="{r}" y2="{b}" stroke="#333333"/><line x1="{left}" y1="{TOP}" x2="{left}" y2="{b}" stroke="#333333"/><text class="gs-axis-title" transform="translate(16 {m}) rotate(-90)" text-anchor="middle">{}</text></svg>"##,
        escape(y_label),
        b = H - BOTTOM,
        r = W - RIGHT,
        m = (TOP + H - BOTTOM) / 2.0
    );
    out
}

/// One progress snapshot of a job: when (ms since the job started) and what the kernel or
/// planner reported.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Milliseconds since the job started.
    pub t_ms: u64,
    /// The progress JSON.
    pub progress: serde_json::Value,
}

fn num(v: &serde_json::Value, key: &str) -> Option<f64> {
    v.get(key).and_then(|x| x.as_f64())
}

/// The chart that matters for a job's progress history (see the module doc).
pub fn progress_plot(title: &str, history: &[Snapshot]) -> String {
    let secs = |s: &Snapshot| s.t_ms as f64 / 1000.0;
    let last = history.last().map(|s| &s.progress);
    // MCTS: the latest visit distribution of root moves.
    if let Some(visits) = last
        .and_then(|p| p.get("visits"))
        .and_then(|v| v.as_object())
    {
        let bars: Vec<(String, f64)> = visits
            .iter()
            .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
            .collect();
        return bar_chart(&format!("{title}: root visits"), "visits", &bars);
    }
    let has = |key: &str| history.iter().any(|s| num(&s.progress, key).is_some());
    if has("lower") || has("upper") {
        let lower = history
            .iter()
            .filter_map(|s| num(&s.progress, "lower").map(|v| (secs(s), v)))
            .collect();
        let upper = history
            .iter()
            .filter_map(|s| num(&s.progress, "upper").map(|v| (secs(s), v)))
            .collect();
        return line_chart(
            &format!("{title}: bounds"),
            "seconds",
            "value",
            &[
                Series {
                    name: "upper bound".into(),
                    color: PALETTE[1],
                    points: upper,
                    steps: true,
                },
                Series {
                    name: "lower bound".into(),
                    color: PALETTE[0],
                    points: lower,
                    steps: true,
                },
            ],
        );
    }
    for key in ["best_score", "best"] {
        if has(key) {
            let pts = history
                .iter()
                .filter_map(|s| num(&s.progress, key).map(|v| (secs(s), v)))
                .collect();
            return line_chart(
                &format!("{title}: best score"),
                "seconds",
                "score",
                &[Series {
                    name: "best score".into(),
                    color: PALETTE[2],
                    points: pts,
                    steps: true,
                }],
            );
        }
    }
    for key in [
        "playouts",
        "nodes",
        "rollouts",
        "tasks_done",
        "probes_done",
        "runs_done",
        "entries_written",
        "databases_done",
    ] {
        if has(key) {
            let pts = history
                .iter()
                .filter_map(|s| num(&s.progress, key).map(|v| (secs(s), v)))
                .collect();
            let label = key.replace('_', " ");
            return line_chart(
                &format!("{title}: {label}"),
                "seconds",
                &label,
                &[Series {
                    name: label.clone(),
                    color: PALETTE[0],
                    points: pts,
                    steps: false,
                }],
            );
        }
    }
    // Any other figure that is a number, the first that changes over the history.
    let mut keys: Vec<&String> = history
        .iter()
        .filter_map(|s| s.progress.as_object())
        .flat_map(|o| o.iter().filter(|(_, v)| v.is_number()).map(|(k, _)| k))
        .collect();
    keys.dedup();
    let varies = |k: &str| {
        let mut vals = history.iter().filter_map(|s| num(&s.progress, k));
        let first = vals.next();
        vals.any(|v| Some(v) != first)
    };
    if let Some(key) = keys.iter().find(|k| varies(k)).or_else(|| keys.first()) {
        let pts = history
            .iter()
            .filter_map(|s| num(&s.progress, key).map(|v| (secs(s), v)))
            .collect();
        return line_chart(
            &format!("{title}: {}", key.replace('_', " ")),
            "seconds",
            key,
            &[Series {
                name: key.replace('_', " "),
                color: PALETTE[0],
                points: pts,
                steps: false,
            }],
        );
    }
    line_chart(title, "seconds", "", &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn well_formed(svg: &str) {
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
        // Every opened element is closed (self-closing or with an end tag).
        let opens = svg.matches('<').count();
        let closes = svg.matches("/>").count() + svg.matches("</").count() * 2;
        assert_eq!(opens, closes, "unbalanced tags: {svg}");
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(-3.7, 12.2, 6);
        assert!(t.first().unwrap() >= &-3.7 && t.last().unwrap() <= &12.2 && t.len() >= 3);
        assert_eq!(ticks(5.0, 5.0, 4), vec![5.0]);
    }

    /// Distinct labels of the ticks of one axis in `svg` (`x` or `y`).
    fn tick_texts(svg: &str, axis: &str) -> Vec<String> {
        let tag = format!(r#"class="gs-tick-{axis}""#);
        svg.split("<text ")
            .filter(|t| t.starts_with(&tag))
            .filter_map(|t| t.split('>').nth(1))
            .map(|t| t.trim_end_matches("</text").to_string())
            .collect()
    }

    #[test]
    fn tick_labels_are_short_and_distinct() {
        // Ticks close together far from zero: never five times "1.642e7".
        let t = ticks(16_420_000.0, 16_421_000.0, 5);
        let l = tick_labels(&t);
        assert_eq!(l[0], "16.4200M");
        let set: std::collections::BTreeSet<_> = l.iter().collect();
        assert_eq!(set.len(), l.len(), "{l:?}");
        assert_eq!(tick_labels(&[0.0, 2000.0, 4000.0]), ["0", "2,000", "4,000"]);
        assert_eq!(tick_labels(&[0.0, 0.2, 0.4]), ["0", "0.2", "0.4"]);
        assert_eq!(tick_labels(&[-0.5, 0.0, 0.5]), ["-0.5", "0", "0.5"]);
        assert_eq!(tick_labels(&[0.0, 5e6, 1e7]), ["0", "5M", "10M"]);
        assert_eq!(fmt_num(1_234_567.0), "1.235M");
        assert_eq!(fmt_num(12_345.0), "12,345");
        assert_eq!(fmt_num(0.123456), "0.1235");
        assert_eq!(thousands(-1_234_567), "-1,234,567");
    }

    #[test]
    fn one_point_or_a_flat_line_still_has_two_ticks_an_axis() {
        for pts in [vec![(3.2, 16_420_000.0)], vec![(0.0, 5.0), (2.0, 5.0)]] {
            let svg = line_chart(
                "t",
                "seconds",
                "nodes",
                &[Series {
                    name: "n".into(),
                    color: PALETTE[0],
                    points: pts,
                    steps: true,
                }],
            );
            well_formed(&svg);
            for axis in ["x", "y"] {
                let l = tick_texts(&svg, axis);
                let set: std::collections::BTreeSet<_> = l.iter().collect();
                assert!(set.len() >= 2, "{axis}: {l:?} in {svg}");
            }
        }
        // Whole numbers: whole ticks (0 and 1 running tasks, not 0, 0.2, ..., 1).
        let svg = line_chart(
            "w",
            "seconds",
            "tasks",
            &[Series {
                name: "w-1".into(),
                color: PALETTE[0],
                points: vec![(0.0, 0.0), (1.0, 1.0), (2.0, 0.0)],
                steps: true,
            }],
        );
        assert_eq!(tick_texts(&svg, "y"), ["0", "1"], "{svg}");
        // Bars of nothing but zeros: a 0..1 scale.
        let svg = bar_chart("b", "visits", &[("a".into(), 0.0), ("b".into(), 0.0)]);
        well_formed(&svg);
        assert!(tick_texts(&svg, "y").len() >= 2, "{svg}");
    }

    #[test]
    fn bounds_closing_in() {
        let h: Vec<Snapshot> = [(0, -21, 21), (100, 0, 21), (250, 0, 1), (400, 1, 1)]
            .iter()
            .map(|&(t, lo, hi)| Snapshot {
                t_ms: t,
                progress: json!({"lower": lo, "upper": hi}),
            })
            .collect();
        let svg = progress_plot("job <1>", &h);
        well_formed(&svg);
        assert!(svg.contains("job &lt;1&gt;: bounds"));
        assert_eq!(svg.matches("class=\"gs-series\"").count(), 2);
    }

    #[test]
    fn visits_and_scores_and_empty() {
        let svg = progress_plot(
            "m",
            &[Snapshot {
                t_ms: 5,
                progress: json!({"visits": {"4": 900, "3": 50}}),
            }],
        );
        well_formed(&svg);
        assert_eq!(svg.matches("class=\"gs-bar\"").count(), 2);
        let svg = progress_plot(
            "n",
            &[
                Snapshot {
                    t_ms: 5,
                    progress: json!({"best_score": 60}),
                },
                Snapshot {
                    t_ms: 900,
                    progress: json!({"best_score": 71}),
                },
            ],
        );
        well_formed(&svg);
        assert!(svg.contains("best score"));
        let svg = progress_plot("e", &[]);
        well_formed(&svg);
        assert!(svg.contains("no data yet"));
        let svg = line_chart(
            "nan",
            "x",
            "y",
            &[Series {
                name: "s".into(),
                color: PALETTE[0],
                points: vec![(f64::NAN, 1.0)],
                steps: false,
            }],
        );
        assert!(svg.contains("no data yet"));
    }
}
