//! What a training run reports per iteration: `metrics.csv` (one row per
//! iteration) and `curves.svg` (losses, evaluation score and speed),
//! both rewritten from the checkpoint's history after each iteration, so
//! they always agree with the last checkpoint, also after a kill or resume.
//!
//! The chart is SVG so it needs no fonts or graphics libraries on the
//! machine: text is left to the viewer.

pub use crate::az::checkpoint::Row;
use std::path::Path;

pub const CSV_HEADER: &str = "iteration,games,positions,buffer,train_steps,policy_loss,value_loss,\
selfplay_games_per_s,simulations_per_s,cache_hit_rate,mean_batch,train_steps_per_s,eval_score,eval_games,\
eval_wins,eval_draws,eval_losses,selfplay_s,train_s,eval_s";

fn opt(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| format!("{v:.5}"))
}

impl Row {
    pub fn csv(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{:.3},{:.1},{:.4},{:.1},{:.2},{},{},{},{},{},{:.2},{:.2},{:.2}",
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
            self.eval_s
        )
    }
}

/// The whole CSV text for `rows`.
pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        s.push_str(&r.csv());
        s.push('\n');
    }
    s
}

/// Draws the curves as SVG text.
pub fn chart_svg(rows: &[Row], title: &str) -> Result<String, String> {
    use plotters::prelude::*;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 900)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let root = root.titled(title, ("sans-serif", 22)).map_err(|e| e.to_string())?;
        let panels = root.split_evenly((3, 1));
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
        let top = (max_of(&pl).max(max_of(&vl)) * 1.1).max(0.1);
        let mut c = ChartBuilder::on(&panels[0])
            .caption("losses", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(x0..n, 0.0..top)
            .map_err(|e| e.to_string())?;
        c.configure_mesh()
            .x_desc("iteration")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()
            .map_err(|e| e.to_string())?;
        c.draw_series(LineSeries::new(pl, &BLUE))
            .map_err(|e| e.to_string())?
            .label("policy cross-entropy")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
        c.draw_series(LineSeries::new(vl, &RED))
            .map_err(|e| e.to_string())?
            .label("value MSE")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
        c.configure_series_labels()
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;

        let ev = series(&|r| r.eval_score);
        let mut c = ChartBuilder::on(&panels[1])
            .caption("evaluation score (draw = ½)", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(x0..n, 0.0..1.0)
            .map_err(|e| e.to_string())?;
        c.configure_mesh()
            .x_desc("iteration")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()
            .map_err(|e| e.to_string())?;
        c.draw_series(LineSeries::new(ev.clone(), &GREEN))
            .map_err(|e| e.to_string())?;
        c.draw_series(ev.iter().map(|&p| Circle::new(p, 3, GREEN.filled())))
            .map_err(|e| e.to_string())?;

        let sims = series(&|r| Some(r.simulations_per_s));
        let top = (max_of(&sims) * 1.1).max(1.0);
        let mut c = ChartBuilder::on(&panels[2])
            .caption("self-play simulations per second", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..n, 0.0..top)
            .map_err(|e| e.to_string())?;
        c.configure_mesh()
            .x_desc("iteration")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(|e| e.to_string())?;
        c.draw_series(LineSeries::new(sims, &BLACK))
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Writes `text` to `path` through a temporary file and a rename, so a
/// reader (or a kill) never sees half a file.
pub fn write_atomic(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        std::io::Write::write_all(&mut f, text)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
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
        let cols = CSV_HEADER.split(',').count();
        for l in &lines {
            assert_eq!(l.split(',').count(), cols, "{l}");
        }
        assert!(lines[1].starts_with("1,0,0,0,0,,,"));
        assert!(lines[2].contains(",1.50000,"));
        assert!(lines[2].contains(",0.75000,"));
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
        // An empty history still draws (the first iteration of a run).
        assert!(chart_svg(&[], "empty").unwrap().contains("</svg>"));
    }
}
