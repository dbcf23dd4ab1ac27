//! End-to-end: SPRT tournaments, `--shard K/N` with `c4sim report`, and the
//! deploy manifests that run shards on a cluster.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn yaml(dir: &Path, tournament: &str, players: &str) -> String {
    format!(
        "mode: tournament\nseed: 5\nreport: {{dir: '{}'}}\ntournament:\n{tournament}players:\n{players}",
        dir.display()
    )
}

/// Runs `c4sim ARGS...` on a scenario file; returns (exit code, stdout, stderr).
fn c4(args: &[&str]) -> (i32, String, String) {
    let out = c4sim().args(args).timeout(Duration::from_secs(120)).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn lines_of(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// `LLR: 2.97 (-2.94, 2.94) [0, 50]` → 2.97
fn llr_line(text: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("LLR: "))
        .filter(|rest| rest.contains(" (-2.94, 2.94) [0, 50]"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|x| x.parse().ok())
}

#[test]
fn sprt_stronger_side_stops_with_h1_before_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario(&yaml(
        dir.path(),
        "  games_per_pair: 400\n  concurrency: 2\n  sprt: {elo0: 0, elo1: 50}\n",
        "  - {kind: minimax, depth: 4, name: Deep}\n  - {kind: minimax, depth: 2, name: Shallow}\n",
    ));
    let file = sc.path.to_str().unwrap();
    let (code, out, err) = c4(&["run", file]);
    assert_eq!(code, 0, "{err}");
    let llr = llr_line(&out).unwrap_or_else(|| panic!("no LLR line in\n{out}"));
    assert!(llr >= 2.94, "{out}");
    assert!(out.contains("Ptnml(0-2): ["), "{out}");
    assert!(out.contains("H1 accepted after"), "{out}");
    let r = report_json(dir.path());
    let s = &r["sprt"];
    assert_eq!(s["result"], "H1", "{s}");
    assert!(s["llr"].as_f64().unwrap() >= s["upper"].as_f64().unwrap());
    assert_eq!((s["elo0"].as_f64(), s["elo1"].as_f64()), (Some(0.0), Some(50.0)));
    let games = r["finished_games"].as_u64().unwrap();
    let pentanomial: u64 = s["pentanomial"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(2 * pentanomial, games, "{s}");
    assert!(games < 400, "stopped at the cap: {games}");
    assert_eq!(r["total_games"], 400);
    // Games in progress at the stop are recorded but do not count.
    let recorded = lines_of(&dir.path().join("games.jsonl"));
    assert!(recorded as u64 >= games && recorded < 400, "{recorded} {games}");
    // Resume: the test is recomputed from games.jsonl; nothing more is played.
    let (code, out2, err) = c4(&["run", file]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines_of(&dir.path().join("games.jsonl")), recorded);
    assert_eq!(llr_line(&out2), Some(llr));
    assert_eq!(report_json(dir.path())["sprt"], r["sprt"]);
}

#[test]
fn sprt_equal_sides_stop_with_h0_or_reach_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let cap = 1000;
    let sc = scenario(&yaml(
        dir.path(),
        &format!("  games_per_pair: {cap}\n  concurrency: 2\n  sprt: {{elo0: 0, elo1: 50, model: logistic}}\n"),
        "  - {kind: random, name: A}\n  - {kind: random, name: B}\n",
    ));
    let out = c4sim()
        .args(["run", sc.path.to_str().unwrap(), "--json"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ev = parse_events(&out.stdout);
    let progress = events(&ev, "progress");
    assert!(progress.iter().all(|p| p["sprt"]["llr"].is_number()));
    let summary = events(&ev, "summary")[0];
    let s = &summary["sprt"];
    assert_ne!(s["result"], "H1", "{s}");
    let games = s["games"].as_u64().unwrap();
    assert!(s["result"] == "H0" || games == cap, "{s}");
    assert_eq!(report_json(dir.path())["sprt"]["result"], s["result"]);
}

#[test]
fn sprt_refuses_shards_and_more_than_two_players() {
    let dir = tempfile::tempdir().unwrap();
    let two = "  - {kind: random}\n  - {kind: leftmost}\n";
    let sc = scenario(&yaml(dir.path(), "  sprt: {elo0: 0, elo1: 10}\n", two));
    let (code, _, err) = c4(&["run", sc.path.to_str().unwrap(), "--shard", "1/2"]);
    assert_eq!(code, 2);
    assert!(err.contains("SPRT"), "{err}");
    let three = format!("{two}  - {{kind: random, name: R2}}\n");
    let sc = scenario(&yaml(dir.path(), "  sprt: {elo0: 0, elo1: 10}\n", &three));
    let (code, _, err) = c4(&["run", sc.path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("exactly 2 players"), "{err}");
    let (code, _, err) = c4(&["run", sc.path.to_str().unwrap(), "--shard", "3/2"]);
    assert_eq!(code, 2);
    assert!(err.contains("K/N"), "{err}");
}

const THREE: &str =
    "  - {kind: minimax, depth: 2, name: Shallow}\n  - {kind: random, name: Random}\n  - {kind: leftmost, name: Leftmost}\n";

#[test]
fn two_shards_merged_give_the_unsharded_report() {
    let whole = tempfile::tempdir().unwrap();
    let split = tempfile::tempdir().unwrap();
    let t = "  games_per_pair: 6\n  concurrency: 2\n";
    let one = scenario(&yaml(whole.path(), t, THREE));
    let (code, _, err) = c4(&["run", one.path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let sharded = scenario(&yaml(split.path(), t, THREE));
    let file = sharded.path.to_str().unwrap();
    for k in ["1/2", "2/2"] {
        let (code, out, err) = c4(&["run", file, "--shard", k]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("c4sim report"), "{out}");
    }
    // Each shard wrote its own files and no report.
    assert_eq!(lines_of(&split.path().join("games.shard-1-of-2.jsonl")), 9);
    assert_eq!(lines_of(&split.path().join("games.shard-2-of-2.jsonl")), 9);
    assert!(!split.path().join("games.jsonl").exists());
    assert!(!split.path().join("report.json").exists());
    let odd = std::fs::read_to_string(split.path().join("games.shard-1-of-2.jsonl")).unwrap();
    for l in odd.lines() {
        let g: Value = serde_json::from_str(l).unwrap();
        assert_eq!(g["game"].as_u64().unwrap() % 2, 1, "{l}");
    }
    let (code, out, err) = c4(&["report", file]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("## Standings") && out.contains("Merged 18 of 18 games"),
        "{out}"
    );
    // The thinking times are the clock's, different in every run.
    let (a, b) = (report_without_time(whole.path()), report_without_time(split.path()));
    for key in [
        "standings",
        "crosstable",
        "finished_games",
        "total_games",
        "reasons",
        "first_mover",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert_eq!(b["finished_games"], 18);
    for f in ["report.md", "report.html", "standings.csv"] {
        assert!(split.path().join(f).exists(), "{f}");
    }
    assert_eq!(
        standings_csv_without_time(whole.path()),
        standings_csv_without_time(split.path())
    );
    // A directory of another tournament is refused.
    let other = scenario(&yaml(split.path(), "  games_per_pair: 4\n", THREE));
    let (code, _, err) = c4(&["report", other.path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("another tournament"), "{err}");
}

/// The number after `--array=1-` in an sbatch script.
fn slurm_array_size(script: &str) -> Option<u64> {
    script
        .lines()
        .find_map(|l| l.strip_prefix("#SBATCH --array=1-"))
        .and_then(|n| n.trim().parse().ok())
}

#[test]
fn deploy_manifests_agree_on_the_shard_count() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let text = std::fs::read_to_string(root.join("k8s/tournament-shards.yaml")).unwrap();
    let docs: Vec<serde_yaml::Value> = serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    let job = docs
        .iter()
        .find(|d| d["kind"] == "Job" && d["spec"]["completionMode"] == "Indexed")
        .expect("an Indexed Job");
    let spec = &job["spec"];
    let completions = spec["completions"].as_u64().unwrap();
    assert!(completions >= 2);
    assert_eq!(spec["parallelism"].as_u64(), Some(completions));
    let c = &spec["template"]["spec"]["containers"][0];
    let env = |name: &str| {
        c["env"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .and_then(|e| e["value"].as_str())
            .unwrap_or_else(|| panic!("env {name}"))
            .to_string()
    };
    assert_eq!(env("SHARDS").parse::<u64>().unwrap(), completions);
    let words: Vec<&str> = c["command"]
        .as_sequence()
        .into_iter()
        .chain(c["args"].as_sequence())
        .flatten()
        .filter_map(|w| w.as_str())
        .collect();
    let cmd = words.join(" ");
    assert!(cmd.contains("c4sim run \"$SCENARIO\""), "{cmd}");
    assert!(
        cmd.contains("--shard \"$((JOB_COMPLETION_INDEX + 1))/$SHARDS\""),
        "{cmd}"
    );
    // The data volume is shared by every pod and the merge job.
    let claim = docs.iter().find(|d| d["kind"] == "PersistentVolumeClaim").unwrap();
    assert_eq!(claim["spec"]["accessModes"][0], "ReadWriteMany");
    let merge: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(root.join("k8s/merge-job.yaml")).unwrap()).unwrap();
    let mc = &merge["spec"]["template"]["spec"]["containers"][0];
    let mcmd: Vec<&str> = mc["command"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert_eq!(mcmd, ["c4sim", "report", env("SCENARIO").as_str()]);
    assert_eq!(mc["workingDir"], c["workingDir"]);
    assert_eq!(
        merge["spec"]["template"]["spec"]["volumes"],
        spec["template"]["spec"]["volumes"]
    );

    let sbatch = std::fs::read_to_string(root.join("slurm/tournament-shards.sbatch")).unwrap();
    assert!(slurm_array_size(&sbatch).is_some_and(|n| n >= 2), "{sbatch}");
    assert!(
        sbatch.contains("c4sim run \"$SCENARIO\" --shard \"${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}\""),
        "{sbatch}"
    );
    let submit = std::fs::read_to_string(root.join("slurm/submit.sh")).unwrap();
    assert!(submit.contains("--dependency=afterok"), "{submit}");
    assert!(std::fs::read_to_string(root.join("slurm/merge.sbatch"))
        .unwrap()
        .contains("c4sim report \"$SCENARIO\""));
}
