//! PNG plots with plotters: training curves (objective and pAUC against epochs, Figure 1 of the
//! pAUC paper) and ROC curves with the FPR range shaded.
//!
//! Text is drawn with a TrueType font read once from the system (DejaVu Sans, Debian package
//! `fonts-dejavu-core`) or from the file named by `RANKRISK_FONT`.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::FontStyle;

/// Font files tried when `RANKRISK_FONT` is unset.
const FONT_CANDIDATES: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

/// Why a plot was not drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlotError {
    /// A font file was found but is not a usable TrueType font.
    #[error("{0} is not a usable TrueType font")]
    BadFont(String),
    /// No font file was found.
    #[error(
        "no font for plot labels: tried {0}; install fonts-dejavu-core or set RANKRISK_FONT to \
         a .ttf file"
    )]
    NoFont(String),
    /// Drawing or writing the PNG failed.
    #[error("plot {path}: {reason}")]
    Draw {
        /// The PNG file.
        path: String,
        /// What plotters reported.
        reason: String,
    },
}

static FONT: OnceLock<Result<(), PlotError>> = OnceLock::new();

fn ensure_font() -> Result<(), PlotError> {
    FONT.get_or_init(|| {
        let candidates: Vec<String> = match std::env::var("RANKRISK_FONT") {
            Ok(path) if !path.is_empty() => vec![path],
            _ => FONT_CANDIDATES.iter().map(|s| s.to_string()).collect(),
        };
        for path in &candidates {
            if let Ok(bytes) = std::fs::read(path) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                return plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                    .map_err(|_| PlotError::BadFont(path.clone()));
            }
        }
        Err(PlotError::NoFont(candidates.join(", ")))
    })
    .clone()
}

/// [`PlotError::Draw`] for the file at `path`.
fn draw_error(path: &Path) -> impl Fn(&dyn std::fmt::Display) -> PlotError + '_ {
    move |e| PlotError::Draw {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// One named curve.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points (x, y).
    pub points: Vec<(f64, f64)>,
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// The axis ranges of `series`: x spans the points exactly, y with 5% padding. A single x
/// value gets a window around it (halved/doubled on a log axis) and a flat y a window of 5% of
/// its value (at least 0.05), so one-point and constant runs draw a visible, labelled axis.
fn bounds(series: &[Series], log_x: bool) -> ((f64, f64), (f64, f64)) {
    let pts = series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|(x, y)| x.is_finite() && y.is_finite() && (!log_x || *x > 0.0));
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        return ((1.0, 10.0), (0.0, 1.0));
    }
    if x1 <= x0 {
        (x0, x1) = if log_x {
            (x0 / 2.0, x0 * 2.0)
        } else {
            (x0 - 0.5, x0 + 0.5)
        };
    }
    let span = y1 - y0;
    let pad = if span > 1e-9 * y0.abs().max(1.0) {
        span * 0.05
    } else {
        (y0.abs() * 0.05).max(0.05)
    };
    ((x0, x1), (y0 - pad, y1 + pad))
}

/// Decimals that tell apart the ticks of an axis spanning `lo..hi` with about `ticks` labels.
fn decimals(lo: f64, hi: f64, ticks: f64) -> usize {
    let step = (hi - lo) / ticks;
    if step.is_finite() && step > 0.0 {
        (-step.log10()).ceil().clamp(0.0, 8.0) as usize
    } else {
        2
    }
}

/// A short axis label: integers without decimals, small numbers with up to 3 significant digits.
fn compact(x: f64) -> String {
    if x.abs() >= 10.0 || x == x.round() {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Two panels side by side (e.g. training objective and pAUC against epochs), each with one
/// line per method; `log_x` puts the x axis on a log scale (methods with very different epoch
/// counts).
///
/// # Errors
/// [`PlotError`] when no font is available or the file cannot be written.
pub fn two_panel_curves(
    path: &Path,
    title: &str,
    x_label: &str,
    left: (&str, &[Series]),
    right: (&str, &[Series]),
    log_x: bool,
) -> Result<(), PlotError> {
    ensure_font()?;
    let err = draw_error(path);
    let root = BitMapBackend::new(path, (1400, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 26))
        .map_err(|e| err(&e))?;
    let panels = root.split_evenly((1, 2));
    for (area, (y_label, series)) in panels.iter().zip([left, right]) {
        let ((x0, x1), (y0, y1)) = bounds(series, log_x);
        let y_decimals = decimals(y0, y1, 8.0);
        let mut builder = ChartBuilder::on(area);
        builder
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(96);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(x_label)
                    .y_desc(y_label)
                    .x_labels(8)
                    .y_labels(8)
                    .x_label_formatter(&|x| compact(*x))
                    .y_label_formatter(&|y| format!("{y:.y_decimals$}"))
                    .label_style(("sans-serif", 16))
                    .axis_desc_style(("sans-serif", 18))
                    .draw()
                    .map_err(|e| err(&e))?;
                for (k, s) in series.iter().enumerate() {
                    let color = COLORS[k % COLORS.len()];
                    let pts: Vec<(f64, f64)> = s
                        .points
                        .iter()
                        .copied()
                        .filter(|(x, y)| y.is_finite() && (!log_x || *x > 0.0))
                        .collect();
                    // Markers too: a run with one evaluation point has no line to draw.
                    chart
                        .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                        .map_err(|e| err(&e))?;
                    chart
                        .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                        .map_err(|e| err(&e))?
                        .label(s.name.clone())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
                        });
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 16))
                    .draw()
                    .map_err(|e| err(&e))?;
            }};
        }
        if log_x {
            draw!(
                builder
                    .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
                    .map_err(|e| err(&e))?
            );
        } else {
            draw!(
                builder
                    .build_cartesian_2d(x0..x1, y0..y1)
                    .map_err(|e| err(&e))?
            );
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// ROC curves (FPR, TPR) with the FPR range `[alpha, beta]` shaded.
///
/// # Errors
/// [`PlotError`] when no font is available or the file cannot be written.
pub fn roc(
    path: &Path,
    title: &str,
    curves: &[Series],
    alpha: f64,
    beta: f64,
) -> Result<(), PlotError> {
    ensure_font()?;
    let err = draw_error(path);
    let root = BitMapBackend::new(path, (720, 680)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..1f64, 0f64..1f64)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("false positive rate")
        .y_desc("true positive rate")
        .label_style(("sans-serif", 16))
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(alpha, 0.0), (beta, 1.0)],
            RGBColor(255, 200, 120).mix(0.35).filled(),
        )))
        .map_err(|e| err(&e))?
        .label(format!("FPR range [{alpha}, {beta}]"))
        .legend(|(x, y)| {
            Rectangle::new(
                [(x, y - 6), (x + 24, y + 6)],
                RGBColor(255, 200, 120).filled(),
            )
        });
    for (k, s) in curves.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        chart
            .draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_point_and_flat_runs_get_a_readable_window() {
        let one = [Series {
            name: "a".into(),
            points: vec![(1.0, 1.1448)],
        }];
        let ((x0, x1), (y0, y1)) = bounds(&one, false);
        assert!(x0 < 1.0 && x1 > 1.0 && y0 < 1.1448 && y1 > 1.1448);
        // Ten labels over the window are all different at the chosen decimals.
        let d = decimals(y0, y1, 8.0);
        let labels: std::collections::BTreeSet<String> = (0..10)
            .map(|k| format!("{:.d$}", y0 + (y1 - y0) * f64::from(k) / 9.0))
            .collect();
        assert_eq!(labels.len(), 10, "{labels:?}");
        let ((lx0, lx1), _) = bounds(&one, true);
        assert!(lx0 > 0.0 && lx0 < 1.0 && lx1 > 1.0);
        let flat = [Series {
            name: "b".into(),
            points: (1..5).map(|i| (f64::from(i), 0.0)).collect(),
        }];
        let (_, (f0, f1)) = bounds(&flat, false);
        assert!(f0 <= -0.05 && f1 >= 0.05);
        // A varying series keeps its own range, padded by 5%.
        let (_, (v0, v1)) = bounds(
            &[Series {
                name: "c".into(),
                points: vec![(1.0, 0.2), (2.0, 0.4)],
            }],
            false,
        );
        assert!((v0 - 0.19).abs() < 1e-12 && (v1 - 0.41).abs() < 1e-12);
    }

    #[test]
    fn writes_png_files() {
        let dir = std::env::temp_dir().join(format!("rankrisk-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = Series {
            name: "a".into(),
            points: (1..20)
                .map(|i| (f64::from(i), 1.0 / f64::from(i)))
                .collect(),
        };
        let b = Series {
            name: "b".into(),
            points: (1..20).map(|i| (f64::from(i) * 3.0, 0.5)).collect(),
        };
        let curves = dir.join("curves.png");
        two_panel_curves(
            &curves,
            "test",
            "epochs",
            ("objective", &[a.clone(), b.clone()]),
            ("pAUC", &[a, b]),
            true,
        )
        .unwrap();
        // One evaluation point, and a flat objective.
        let mut written = Vec::new();
        for (name, points) in [
            ("one", vec![(1.0, 1.1448)]),
            ("flat", (1..6).map(|i| (f64::from(i), 0.25)).collect()),
        ] {
            let s = [Series {
                name: name.into(),
                points,
            }];
            let path = dir.join(format!("{name}.png"));
            two_panel_curves(
                &path,
                name,
                "epochs",
                ("objective", &s),
                ("pAUC", &s),
                false,
            )
            .unwrap();
            written.push(path);
        }
        let roc_path = dir.join("roc.png");
        let r = Series {
            name: "model".into(),
            points: vec![(0.0, 0.0), (0.1, 0.6), (0.5, 0.9), (1.0, 1.0)],
        };
        roc(&roc_path, "ROC", &[r], 0.05, 0.5).unwrap();
        written.extend([curves, roc_path]);
        for p in written {
            let bytes = std::fs::read(&p).unwrap();
            assert!(
                bytes.len() > 2000 && bytes.starts_with(b"\x89PNG"),
                "{}",
                p.display()
            );
        }
    }
}
