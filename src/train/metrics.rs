//! What a training run reports per iteration: `metrics.csv` (one row per
//! iteration) and `curves.svg` (losses, evaluation score and speed, and,
//! when `eval.accuracy` measured any, mistakes against perfect play by
//! training hours), both rewritten from the checkpoint's history after each
//! iteration, so they always agree with the last checkpoint, also after a
//! kill or resume.
//!
//! The last CSV columns: `acc_*` from `eval.accuracy` (empty where not
//! measured), and `hours`, the training time so far: the sum of every
//! iteration's self-play, training, evaluation and accuracy seconds up to
//! that row. It leaves out checkpoint writing and the time between the
//! sessions of a resumed run, so runs compare by the compute they used;
//! older checkpoints' rows, without `acc_s`, still sum the rest. After it,
//! `exact_values`: the iteration's positions whose value target the solver
//! proved (`self_play.exact_value_nodes`; 0 when off). Last,
//! `learning_rate`: the iteration's rate (`optimizer.learning_rate_schedule`;
//! empty before training starts and in rows older than the column).
//! Then `cpu_s`: the CPU seconds the iteration used, all threads together
//! (empty in rows older than the column). `hours` counts wall time, which
//! grows when other jobs share the cores (A/B arms side by side); the sum
//! of `cpu_s` over the iterations, divided by the cores, is the time the
//! same work takes on the machine alone. Then `reply_loss`: the reply
//! head's cross-entropy (`network.reply_head`; empty without it).
//!
//! The chart is SVG so it needs no fonts or graphics libraries on the
//! machine: text is left to the viewer.

pub use crate::az::meta::Row;

pub const CSV_HEADER: &str = "iteration,games,positions,buffer,train_steps,policy_loss,value_loss,\
selfplay_games_per_s,simulations_per_s,cache_hit_rate,mean_batch,train_steps_per_s,eval_score,eval_games,\
eval_wins,eval_draws,eval_losses,selfplay_s,train_s,eval_s,acc_positions,acc_raw_mistakes,acc_raw_se,\
acc_mcts_mistakes,acc_mcts_se,acc_s,hours,exact_values,learning_rate,cpu_s,reply_loss";

fn opt(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v:.5}"))
}

/// Seconds an iteration spent (see the module doc's `hours`).
pub fn iteration_seconds(r: &Row) -> f64 {
    r.selfplay_s + r.train_s + r.eval_s + r.acc_s
}

/// Each row's training hours so far.
pub fn hours(rows: &[Row]) -> Vec<f64> {
    rows.iter()
        .scan(0.0, |sum, r| {
            *sum += iteration_seconds(r);
            Some(*sum / 3600.0)
        })
        .collect()
}

impl Row {
    /// The row's CSV line, given its training hours so far.
    pub fn csv(&self, hours: f64) -> String {
        format!(
            "{},{},{},{},{},{},{},{:.3},{:.1},{:.4},{:.1},{:.2},{},{},{},{},{},{:.2},{:.2},{:.2},{},{},{},{},{},{:.2},{:.6},{},{},{},{}",
            self.iteration,
            self.games,
            self.positions,
            self.buffer,
            self.train_steps,
            opt(self.policy_loss),
            opt(self.value_loss),
            self.selfplay_games_per_s,
            self.simulations_per_s,
            self.cache_hit_rate,
            self.mean_batch,
            self.train_steps_per_s,
            opt(self.eval_score),
            self.eval_games,
            self.eval_wins,
            self.eval_draws,
            self.eval_losses,
            self.selfplay_s,
            self.train_s,
            self.eval_s,
            self.acc_positions,
            opt(self.acc_raw_mistakes),
            opt(self.acc_raw_se),
            opt(self.acc_mcts_mistakes),
            opt(self.acc_mcts_se),
            self.acc_s,
            hours,
            self.exact_values,
            self.learning_rate.map_or_else(String::new, |v| format!("{v}")),
            match self.cpu_s {
                0.0 => String::new(),
                s => format!("{s:.2}"),
            },
            opt(self.reply_loss)
        )
    }
}

/// The columns a distributed trainer adds (see [`Row`]'s `workers`).
pub const CSV_DISTRIBUTED: &str = "workers,files,stale,rejected,mean_lag,worker_s,worker_cpu_s,selfplay_positions";

/// The whole CSV text for `rows`. A distributed trainer's rows (any with
/// files taken) get [`CSV_DISTRIBUTED`] after the others; a single-process
/// run's file has the columns it always had.
pub fn csv(rows: &[Row]) -> String {
    let distributed = rows.iter().any(|r| r.files > 0);
    let mut s = String::from(CSV_HEADER);
    if distributed {
        s.push(',');
        s.push_str(CSV_DISTRIBUTED);
    }
    s.push('\n');
    for (r, h) in rows.iter().zip(hours(rows)) {
        s.push_str(&r.csv(h));
        if distributed {
            s.push_str(&format!(
                ",{},{},{},{},{:.3},{:.2},{:.2},{}",
                r.workers, r.files, r.stale, r.rejected, r.mean_lag, r.worker_s, r.selfplay_cpu_s, r.selfplay_positions
            ));
        }
        s.push('\n');
    }
    s
}

/// Why the chart could not be drawn: plotters' error, as its text (its
/// type is generic over the backend, so the text is what is kept).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChartError(String);

impl<E: std::error::Error + Send + Sync> From<plotters::prelude::DrawingAreaErrorKind<E>> for ChartError {
    fn from(e: plotters::prelude::DrawingAreaErrorKind<E>) -> Self {
        ChartError(e.to_string())
    }
}

/// Draws the curves as SVG text.
pub fn chart_svg(rows: &[Row], title: &str) -> Result<String, ChartError> {
    use plotters::prelude::*;
    let mut svg = String::new();
    {
        // The accuracy panel only when a row has it, so runs without
        // `eval.accuracy` keep their chart as it was.
        let accuracy = rows.iter().any(|r| r.acc_positions > 0);
        let n_panels = if accuracy { 4 } else { 3 };
        let root = SVGBackend::with_string(&mut svg, (900, 300 * n_panels as u32)).into_drawing_area();
        root.fill(&WHITE)?;
        let root = root.titled(title, ("sans-serif", 22))?;
        let panels = root.split_evenly((n_panels, 1));
        let n = rows.last().map_or(1, |r| r.iteration).max(1) as f64;
        let x0 = rows.first().map_or(0, |r| r.iteration.saturating_sub(1)) as f64;
        let series = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
            rows.iter()
                .filter_map(|r| f(r).filter(|v| v.is_finite()).map(|v| (r.iteration as f64, v)))
                .collect()
        };
        let max_of = |v: &[(f64, f64)]| v.iter().map(|p| p.1).fold(0.0f64, f64::max);

        let pl = series(&|r| r.policy_loss);
        let vl = series(&|r| r.value_loss);
        let rl = series(&|r| r.reply_loss);
        let top = (max_of(&pl).max(max_of(&vl)).max(max_of(&rl)) * 1.1).max(0.1);
        let mut c = iteration_panel(&panels[0], "losses", x0..n, top, false)?;
        c.draw_series(LineSeries::new(pl, &BLUE))?
            .label("policy cross-entropy")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
        c.draw_series(LineSeries::new(vl, &RED))?
            .label("value MSE")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
        // Only for runs with a reply head, so other charts stay as they were.
        if !rl.is_empty() {
            let grey = RGBColor(128, 128, 128);
            c.draw_series(LineSeries::new(rl, &grey))?
                .label("reply cross-entropy")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey));
        }
        c.configure_series_labels().border_style(BLACK).draw()?;

        let ev = series(&|r| r.eval_score);
        let mut c = iteration_panel(&panels[1], "evaluation score (draw = ½)", x0..n, 1.0, false)?;
        c.draw_series(LineSeries::new(ev.clone(), &GREEN))?;
        c.draw_series(ev.iter().map(|&p| Circle::new(p, 3, GREEN.filled())))?;

        let sims = series(&|r| Some(r.simulations_per_s));
        let top = (max_of(&sims) * 1.1).max(1.0);
        let mut c = iteration_panel(&panels[2], "self-play simulations per second", x0..n, top, true)?;
        c.draw_series(LineSeries::new(sims, &BLACK))?;
        if accuracy {
            accuracy_panel(&panels[3], rows)?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// One panel of the chart: iterations `x` across, 0 to `top` up, captioned
/// and meshed; `whole_y` labels the y-axis in whole numbers (and gives them
/// the room large numbers need).
fn iteration_panel<'a, DB: plotters::prelude::DrawingBackend>(
    area: &'a plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    x: std::ops::Range<f64>,
    top: f64,
    whole_y: bool,
) -> Result<
    plotters::prelude::ChartContext<
        'a,
        DB,
        plotters::prelude::Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    ChartError,
> {
    use plotters::prelude::*;
    let mut c = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(if whole_y { 70 } else { 50 })
        .build_cartesian_2d(x, 0.0..top)?;
    let mut mesh = c.configure_mesh();
    mesh.x_desc("iteration").x_label_formatter(&|x| format!("{x:.0}"));
    if whole_y {
        mesh.y_label_formatter(&|y| format!("{y:.0}"));
    }
    mesh.draw()?;
    Ok(c)
}

/// The mistakes against perfect play, raw network and search, each point
/// with a bar of ± one standard error, by training hours (the x-axis the
/// learning issue's anchors use: how much a CPU-hour teaches).
fn accuracy_panel<DB: plotters::prelude::DrawingBackend>(
    area: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    rows: &[Row],
) -> Result<(), ChartError> {
    use plotters::prelude::*;
    let at = hours(rows);
    // (hours, rate, standard error) of each measured row.
    let points = |rate: fn(&Row) -> [Option<f64>; 2]| -> Vec<(f64, f64, f64)> {
        rows.iter()
            .zip(&at)
            .filter_map(|(r, &h)| match rate(r) {
                [Some(p), se] if r.acc_positions > 0 && p.is_finite() => Some((h, p, se.unwrap_or(0.0))),
                _ => None,
            })
            .collect()
    };
    let raw = points(|r| [r.acc_raw_mistakes, r.acc_raw_se]);
    let mcts = points(|r| [r.acc_mcts_mistakes, r.acc_mcts_se]);
    let top = raw
        .iter()
        .chain(&mcts)
        .map(|p| p.1 + p.2)
        .fold(0.05f64, f64::max)
        .min(0.91)
        * 1.1;
    let right = at.last().copied().unwrap_or(0.0).max(1e-3) * 1.02;
    let mut c = ChartBuilder::on(area)
        .caption(
            "W/D/L mistakes against perfect play (eval.accuracy, ± 1 s.e.)",
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..right, 0.0..top)?;
    c.configure_mesh()
        .x_desc("training hours")
        .x_label_formatter(&|x| format!("{x:.2}"))
        .y_label_formatter(&|y| format!("{:.0}%", y * 100.0))
        .draw()?;
    for (series, color, label) in [
        (&raw, RED, "network alone (1 simulation)"),
        (&mcts, BLUE, "search (eval.accuracy.simulations)"),
    ] {
        c.draw_series(LineSeries::new(series.iter().map(|p| (p.0, p.1)), color))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        c.draw_series(series.iter().map(|p| Circle::new((p.0, p.1), 3, color.filled())))?;
        c.draw_series(
            series
                .iter()
                .map(|p| PathElement::new(vec![(p.0, (p.1 - p.2).max(0.0)), (p.0, p.1 + p.2)], color)),
        )?;
    }
    c.configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_one_line_per_row_and_blank_for_missing() {
        let rows = vec![
            Row {
                iteration: 1,
                ..Default::default()
            },
            Row {
                iteration: 2,
                policy_loss: Some(1.5),
                eval_score: Some(0.75),
                ..Default::default()
            },
        ];
        let text = csv(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(CSV_HEADER.ends_with(
            ",acc_positions,acc_raw_mistakes,acc_raw_se,acc_mcts_mistakes,acc_mcts_se,acc_s,hours,exact_values,learning_rate,cpu_s,reply_loss"
        ));
        // Not measured: no positions and empty rates.
        assert!(lines[1].ends_with(",0,,,,,0.00,0.000000,0,,,"), "{}", lines[1]);
        let cols = CSV_HEADER.split(',').count();
        for l in &lines {
            assert_eq!(l.split(',').count(), cols, "{l}");
        }
        assert!(lines[1].starts_with("1,0,0,0,0,,,"));
        assert!(lines[2].contains(",1.50000,"));
        assert!(lines[2].contains(",0.75000,"));
    }

    #[test]
    fn accuracy_columns_and_hours_so_far() {
        let rows = vec![
            Row {
                iteration: 1,
                selfplay_s: 1800.0,
                train_s: 900.0,
                ..Default::default()
            },
            Row {
                iteration: 2,
                selfplay_s: 600.0,
                eval_s: 200.0,
                acc_s: 100.0,
                acc_positions: 300,
                acc_raw_mistakes: Some(0.25),
                acc_raw_se: Some(0.025),
                acc_mcts_mistakes: Some(0.1),
                acc_mcts_se: Some(0.017),
                learning_rate: Some(3e-4),
                cpu_s: 1234.5,
                reply_loss: Some(1.25),
                ..Default::default()
            },
        ];
        assert_eq!(hours(&rows), [0.75, 1.0]);
        let text = csv(&rows);
        let header: Vec<&str> = CSV_HEADER.split(',').collect();
        let line: Vec<&str> = text.lines().nth(2).unwrap().split(',').collect();
        let col = |name: &str| line[header.iter().position(|h| *h == name).unwrap()];
        assert_eq!(col("acc_positions"), "300");
        assert_eq!(col("acc_raw_mistakes"), "0.25000");
        assert_eq!(col("acc_mcts_se"), "0.01700");
        assert_eq!(col("acc_s"), "100.00");
        assert_eq!(col("hours"), "1.000000");
        assert_eq!(col("learning_rate"), "0.0003");
        assert_eq!(col("cpu_s"), "1234.50");
        assert_eq!(col("reply_loss"), "1.25000");
        // An older checkpoint's row (no accuracy fields, no reply loss) still reads.
        let old: Row = serde_json::from_str(r#"{"iteration": 3, "eval_s": 36.0}"#).unwrap();
        assert_eq!((old.acc_positions, old.acc_raw_mistakes, old.acc_s), (0, None, 0.0));
        assert_eq!(old.reply_loss, None);
        assert!(old.csv(0.01).ends_with(",0,,,,,0.00,0.010000,0,,,"));

        let svg = chart_svg(&rows, "acc").unwrap();
        assert!(
            svg.contains("mistakes against perfect play") && svg.contains("training hours"),
            "{svg}"
        );
        assert!(svg.contains("network alone (1 simulation)"));
        let without = chart_svg(&rows[..1], "none").unwrap();
        assert!(!without.contains("mistakes against perfect play"));
    }

    #[test]
    fn chart_is_svg_with_the_curves() {
        let rows: Vec<Row> = (1..=4)
            .map(|i| Row {
                iteration: i,
                policy_loss: Some(2.0 / i as f64),
                value_loss: Some(1.0 / i as f64),
                eval_score: (i % 2 == 0).then_some(0.5),
                simulations_per_s: 1000.0,
                ..Default::default()
            })
            .collect();
        let svg = chart_svg(&rows, "tiny").unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("policy cross-entropy"));
        assert!(svg.contains("<polyline"));
        assert!(!svg.contains("reply cross-entropy"), "no reply curve without the head");
        let with_reply: Vec<Row> = rows
            .iter()
            .map(|r| Row {
                reply_loss: Some(1.7),
                ..r.clone()
            })
            .collect();
        assert!(chart_svg(&with_reply, "reply").unwrap().contains("reply cross-entropy"));
        // An empty history still draws (the first iteration of a run).
        assert!(chart_svg(&[], "empty").unwrap().contains("</svg>"));
    }
}
