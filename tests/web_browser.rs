//! The page in a real browser: headless Debian Chromium driven through
//! chromedriver with fantoccini (no download at run time; `.ci/run`
//! installs both with apt). It plays a whole game by clicks against
//! `leftmost`, reloads mid-game and finds the same position, and watches a
//! tournament's standings change while `c4sim run --web` plays it. The
//! analysis board: positions by URL with the solver's exact scores (at once
//! from the score book for early positions), the AI's view, a hot seat,
//! replays that mark the move that threw a win, a solution shown as it is
//! proven.
//!
//! `cargo test --test web_browser -- --ignored screenshot` also writes
//! docs/web/game.png (a game in progress against the shipped AlphaZero) and
//! docs/web/analysis.png (a position opened by URL, its solution and the
//! AI's view shown).

mod common;

use common::web::{serve, serve_leftmost};
use fantoccini::{Client, ClientBuilder, Locator};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// chromedriver and its browser session; both end when dropped.
struct Browser {
    driver: Child,
    client: Option<Client>,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Whether the browser is here. Without it the tests say so and pass, so
/// `cargo test` works on a machine without Chromium; CI (`.ci/run`) installs
/// it and sets `C4SIM_REQUIRE_BROWSER=1`, where a missing browser fails.
fn browser_present() -> bool {
    let present = std::path::Path::new(CHROMEDRIVER).exists() && std::path::Path::new(CHROMIUM).exists();
    let required = std::env::var("C4SIM_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    assert!(
        present || !required,
        "the browser test needs Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver"
    );
    if !present {
        eprintln!("SKIPPED: no {CHROMIUM} / {CHROMEDRIVER} (apt-get install -y chromium chromium-driver)");
    }
    present
}

impl Browser {
    async fn start() -> Browser {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let mut b = Browser { driver, client: None };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=820,1100", "--force-prefers-reduced-motion"]
            }),
        );
        // chromedriver listens before it is ready for sessions, and may reset
        // the first request on a busy machine (seen in a clean CI run): a
        // few tries, then the error.
        let mut tries = 0;
        let client = loop {
            tries += 1;
            match ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(c) => break c,
                Err(e) if tries < 5 => {
                    eprintln!("browser session, try {tries}: {e}");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => panic!("a browser session: {e}"),
            }
        };
        b.client = Some(client);
        b
    }

    fn c(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    /// Waits (up to 30 s) until `attr` (a data attribute or a property) of
    /// the element `css` satisfies `ok`;
    /// returns its value.
    async fn wait_attr(&self, css: &str, attr: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last = None;
        loop {
            if let Ok(e) = self.c().find(Locator::Css(css)).await {
                // data-* are attributes; textContent, hidden are properties.
                last = if attr.starts_with("data-") {
                    e.attr(attr).await.ok().flatten()
                } else {
                    e.prop(attr).await.ok().flatten()
                };
                if last.as_deref().is_some_and(&ok) {
                    return last.unwrap();
                }
            }
            assert!(Instant::now() < deadline, "{css} [{attr}] stayed {last:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits (up to 30 s) until at least `n` elements match `css`.
    async fn wait_count(&self, css: &str, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let found = self.c().find_all(Locator::Css(css)).await.map_or(0, |v| v.len());
            if found >= n {
                return;
            }
            assert!(Instant::now() < deadline, "{css}: {found} of {n}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn text(&self, css: &str) -> String {
        self.c().find(Locator::Css(css)).await.unwrap().text().await.unwrap()
    }

    async fn click(&self, css: &str) {
        self.c().find(Locator::Css(css)).await.unwrap().click().await.unwrap();
    }

    /// Waits for the person's turn, then plays column `col` (from 0) by a
    /// click, or by its number key with `key`.
    async fn play(&self, col: usize, key: bool) {
        self.wait_attr("#board", "data-your-turn", |v| v == "true").await;
        if key {
            let body = self.c().find(Locator::Css("body")).await.unwrap();
            body.send_keys(&(col + 1).to_string()).await.unwrap();
        } else {
            self.click(&format!("#board button[data-col=\"{col}\"]")).await;
        }
    }
}

#[tokio::test]
async fn plays_a_whole_game_by_clicks_and_finds_it_again_after_a_reload() {
    if !browser_present() {
        return;
    }
    let started = Instant::now();
    let srv = serve_leftmost(&[]);
    let b = Browser::start().await;
    b.c().goto(&format!("http://{}/", srv.addr)).await.unwrap();
    b.wait_attr("#status", "textContent", |t| t.contains("New game")).await;
    // Red a person, Yellow the server's player: the menus' defaults.
    b.click("#new-game").await;
    b.play(3, false).await;
    b.play(3, true).await;
    let moves = b.wait_attr("#board", "data-moves", |m| m == "3,0,3,0").await;
    // Reconnect mid-game: a reload finds the same position, still our turn.
    b.c().refresh().await.unwrap();
    b.wait_attr("#board", "data-moves", |m| m == moves).await;
    b.wait_attr("#board", "data-your-turn", |v| v == "true").await;
    b.play(3, false).await;
    b.play(3, false).await;
    b.wait_attr("#board", "data-over", |v| v == "true").await;
    assert_eq!(b.text("#status").await, "You win.");
    assert_eq!(
        b.c().find_all(Locator::Css("#board .piece.win")).await.unwrap().len(),
        4,
        "the winning line is highlighted"
    );
    assert_eq!(b.c().find_all(Locator::Css("#moves li")).await.unwrap().len(), 7);
    assert!(b.text("#resign").await.contains("Resign"));
    b.client.as_ref().unwrap().clone().close().await.unwrap();
    eprintln!("browser game test: {:.1} s", started.elapsed().as_secs_f64());
}

/// `?pos=` opens a position; "Show the solution" shows each column's exact
/// score as the solver gives it (one of its published 6×7 positions); the
/// URL follows the game, so a reload comes back to the same position with
/// the solution still shown; a bad link says why.
#[tokio::test]
async fn a_position_from_the_url_shows_the_solvers_scores_and_survives_a_reload() {
    if !browser_present() {
        return;
    }
    let pos = "43745416472735";
    let moves: Vec<usize> = pos.bytes().map(|b| (b - b'1') as usize).collect();
    let mut solver = c4sim::solver::Solver::new(c4sim::game::BoardConfig::default(), 20).unwrap();
    let expected = solver.scores(&solver.position(&moves).unwrap(), None);
    let as_list = |m: &[usize]| m.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");

    let srv = serve_leftmost(&[]);
    let b = Browser::start().await;
    b.c().goto(&format!("http://{}/?pos={pos}", srv.addr)).await.unwrap();
    b.wait_attr("#board", "data-moves", |m| m == as_list(&moves)).await;
    b.wait_attr("#board", "data-your-turn", |v| v == "true").await;
    b.click("#show-solution").await;
    b.wait_attr("#solution", "data-pos", |p| p == pos).await;
    let mut shown = Vec::new();
    for e in b.c().find_all(Locator::Css("#solution .score")).await.unwrap() {
        let s = e.attr("data-score").await.unwrap().unwrap_or_default();
        shown.push(s.parse::<i32>().ok());
    }
    assert_eq!(shown, expected, "the seven scores of {pos}");

    // One move each; the URL says the new position, and a reload keeps it.
    b.play(3, false).await;
    let after = b
        .wait_attr("#board", "data-moves", |m| m.split(',').count() == moves.len() + 2)
        .await;
    let url = b.c().current_url().await.unwrap();
    let digits: String = after
        .split(',')
        .map(|c| (c.parse::<u8>().unwrap() + 1).to_string())
        .collect();
    assert_eq!(
        url.query(),
        Some(format!("pos={digits}&red=person&yellow=leftmost").as_str()),
        "{url}"
    );
    b.c().refresh().await.unwrap();
    b.wait_attr("#board", "data-moves", |m| m == after).await;
    b.wait_attr("#solution", "data-pos", |p| p == digits).await;

    // A link to no position of this board.
    b.c().goto(&format!("http://{}/?pos=1111111", srv.addr)).await.unwrap();
    b.wait_attr("#error", "textContent", |t| t.contains("cannot be opened"))
        .await;
    b.client.as_ref().unwrap().clone().close().await.unwrap();
}

/// A position past the score book is answered as it is proven: "working…"
/// under the columns still searched, a column's outcome ("win", "draw",
/// "loss", in its colour) before its exact words, and a note that says
/// the search goes on.
#[tokio::test]
async fn the_solution_shows_outcomes_first_and_what_is_being_worked_on() {
    if !browser_present() {
        return;
    }
    let pos = "744466474";
    let srv = serve_leftmost(&[]);
    let b = Browser::start().await;
    b.c().goto(&format!("http://{}/?pos={pos}", srv.addr)).await.unwrap();
    b.wait_attr("#board", "data-your-turn", |v| v == "true").await;
    b.click("#show-solution").await;
    b.wait_attr("#solution", "textContent", |t| t.contains("working…"))
        .await;
    b.wait_attr("#solution-note", "textContent", |t| t.starts_with("Solving…"))
        .await;
    b.wait_count("#solution .score.pending", 1).await;
    let e = b.c().find(Locator::Css("#solution .score.pending")).await.unwrap();
    let text = e.text().await.unwrap();
    assert!(
        ["win", "draw", "loss"].iter().any(|w| text.starts_with(w)),
        "an outcome before its score: {text}"
    );
    assert_eq!(e.attr("data-score").await.unwrap().unwrap_or_default(), "");
    b.client.as_ref().unwrap().clone().close().await.unwrap();
}

/// With the shipped score book (`players/solver.yaml`'s `scores`), every
/// column's score of an early position is a lookup: the empty board shows
/// Pons' published scores, and each position of a hot-seat game up to
/// `4453` shows the book's seven scores, the solution kept on as the moves
/// are played. Without the book the empty board alone takes minutes on
/// 2 threads, so a missing or unused book fails here at the 30 s wait;
/// how long each answer took is printed (the note quotes it).
#[tokio::test]
async fn early_positions_show_all_seven_scores_at_once_from_the_score_book() {
    if !browser_present() {
        return;
    }
    let solver = c4sim::solver::Solver::new(c4sim::game::BoardConfig::default(), 10).unwrap();
    let bytes = std::fs::read("models/solver-scores-6x7.bin").unwrap();
    let book = c4sim::solver::ScoreBook::parse(&bytes).unwrap();
    let shown = |b: &Browser| {
        let c = b.c().clone();
        async move {
            let mut s = Vec::new();
            for e in c.find_all(Locator::Css("#solution .score")).await.unwrap() {
                s.push(
                    e.attr("data-score")
                        .await
                        .unwrap()
                        .unwrap_or_default()
                        .parse::<i32>()
                        .ok(),
                );
            }
            s
        }
    };
    let srv = serve_leftmost(&[]);
    let b = Browser::start().await;
    b.c()
        .goto(&format!("http://{}/?pos=&red=person&yellow=person", srv.addr))
        .await
        .unwrap();
    b.wait_attr("#board", "data-your-turn", |v| v == "true").await;
    let asked = Instant::now();
    b.click("#show-solution").await;
    b.wait_count("#solution .score:not([data-score=\"\"])", 7).await;
    let mut took = vec![("(empty)".to_string(), asked.elapsed())];
    assert_eq!(
        shown(&b).await,
        [-2, -1, 0, 1, 0, -1, -2].map(Some).to_vec(),
        "the empty board"
    );

    let mut pos = String::new();
    for d in "4453".chars() {
        b.play(d.to_digit(10).unwrap() as usize - 1, false).await;
        let asked = Instant::now();
        pos.push(d);
        b.wait_attr("#solution", "data-pos", |p| p == pos).await;
        took.push((pos.clone(), asked.elapsed()));
        let moves: Vec<usize> = pos.bytes().map(|b| (b - b'1') as usize).collect();
        let want = book.column_scores(&solver, &solver.position(&moves).unwrap());
        assert_eq!(Some(shown(&b).await), want, "the seven scores of {pos}");
        assert!(want.unwrap().iter().all(Option::is_some), "{pos}: no column is full");
    }
    eprintln!("all seven scores shown after: {took:?}");
    b.client.as_ref().unwrap().clone().close().await.unwrap();
}

/// "Show the AI's view": under the board, what the game's player thinks of
/// each column (minimax depth 4 here: its evaluation), the column it would
/// play outlined, as the library's own view of the position gives them.
#[tokio::test]
async fn the_ais_view_shows_its_evaluation_of_each_column() {
    if !browser_present() {
        return;
    }
    let pos = "4453";
    let spec = "{kind: minimax, depth: 4, name: Minimax4}";
    let expected = c4sim::web::analysis::player_view(
        &c4sim::scenario::parse_player_spec(spec).unwrap(),
        c4sim::game::BoardConfig::default(),
        pos,
    )
    .unwrap();
    let srv = serve(&["web", "--bind", "127.0.0.1:0", "--player", spec], false);
    let b = Browser::start().await;
    b.c().goto(&format!("http://{}/?pos={pos}", srv.addr)).await.unwrap();
    b.wait_attr("#board", "data-your-turn", |v| v == "true").await;
    b.click("#show-view").await;
    b.wait_attr("#view", "data-pos", |p| p == pos).await;
    let mut texts = Vec::new();
    let mut chosen = Vec::new();
    for (c, e) in b
        .c()
        .find_all(Locator::Css("#view .score"))
        .await
        .unwrap()
        .into_iter()
        .enumerate()
    {
        texts.push(e.text().await.unwrap());
        if e.attr("class").await.unwrap().unwrap_or_default().contains("chosen") {
            chosen.push(c);
        }
    }
    let want: Vec<String> = expected["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert_eq!(texts, want, "minimax's evaluation of each column of {pos}");
    assert_eq!(
        chosen,
        vec![expected["column"].as_u64().unwrap() as usize],
        "{expected}"
    );
    let note = b
        .wait_attr("#view-note", "textContent", |t| t.contains("Minimax4"))
        .await;
    assert!(note.contains("evaluation"), "{note}");
    b.client.as_ref().unwrap().clone().close().await.unwrap();
}

/// A hot seat: two people on one page, by clicks; the URL names the
/// position and both sides, so a fresh load of it (no stored game) comes
/// back to the same position, and a move can be taken back.
#[tokio::test]
async fn a_hot_seat_game_comes_back_from_its_url_and_takes_a_move_back() {
    if !browser_present() {
        return;
    }
    let srv = serve_leftmost(&[]);
    let b = Browser::start().await;
    b.c().goto(&format!("http://{}/", srv.addr)).await.unwrap();
    b.wait_attr("#status", "textContent", |t| t.contains("New game")).await;
    let yellow = b.c().find(Locator::Css("#side-1")).await.unwrap();
    yellow.select_by_value("person").await.unwrap();
    b.click("#new-game").await;
    for col in [3, 4, 3] {
        b.play(col, false).await;
    }
    b.wait_attr("#board", "data-moves", |m| m == "3,4,3").await;
    let url = b.c().current_url().await.unwrap();
    assert_eq!(url.query(), Some("pos=454&red=person&yellow=person"), "{url}");
    // A fresh load of the URL: no stored game, the link alone.
    b.c().execute("sessionStorage.clear()", vec![]).await.unwrap();
    b.c().refresh().await.unwrap();
    b.wait_attr("#board", "data-moves", |m| m == "3,4,3").await;
    b.wait_attr("#board", "data-your-turn", |v| v == "true").await;
    let status = b.text("#status").await;
    assert!(status.starts_with("Yellow (Y) to move"), "{status}");
    b.wait_attr("#undo", "disabled", |d| d == "false").await;
    b.click("#undo").await;
    b.wait_attr("#board", "data-moves", |m| m == "3,4").await;
    b.play(2, false).await;
    b.wait_attr("#board", "data-moves", |m| m == "3,4,2").await;
    b.client.as_ref().unwrap().clone().close().await.unwrap();
}

/// A replay of a recorded game (perfect play but for one move that throws
/// the win away, on a 4×5 board where the solver proves every position at
/// once) marks exactly that move, and steps by buttons and arrow keys.
#[tokio::test]
async fn a_replay_marks_exactly_the_move_that_threw_the_win() {
    if !browser_present() {
        return;
    }
    use c4sim::solver::Solver;
    let cfg = c4sim::game::BoardConfig::new(4, 5, 3).unwrap();
    let mut s = Solver::new(cfg, 16).unwrap();
    // Perfect moves, except at the first position where the side to move
    // wins and a column exists that does not: it plays that one.
    let (mut moves, mut thrown) = (Vec::new(), None);
    loop {
        let p = s.position(&moves).unwrap();
        let scores = s.scores(&p, None);
        let (best, v) = s.best_move(&p, None).unwrap();
        let bad = scores.iter().position(|x| x.is_some_and(|x| x <= 0));
        let col = match (thrown, bad) {
            (None, Some(c)) if v > 0 => {
                thrown = Some(moves.len());
                c
            }
            _ => best,
        };
        if s.is_winning_move(&p, col) || moves.len() + 1 == cfg.cells() {
            moves.push(col);
            break;
        }
        moves.push(col);
    }
    let thrown = thrown.expect("a thrown win in the game");
    let digits: String = moves.iter().map(|c| (c + 1).to_string()).collect();

    let srv = serve_leftmost(&["--board", "4x5x3"]);
    let b = Browser::start().await;
    b.c()
        .goto(&format!("http://{}/?replay={digits}&red=A&yellow=B", srv.addr))
        .await
        .unwrap();
    let n = moves.len().to_string();
    b.wait_attr("#replay-moves", "data-checked", |c| c == n).await;
    let marked = b.wait_attr("#replay-moves", "data-mistakes", |_| true).await;
    assert_eq!(marked, thrown.to_string(), "the game {digits}");
    // Stepping: the last position, then back one by key, then the first.
    b.click("#rp-last").await;
    b.wait_attr("#replay-moves", "data-ply", |p| p == n).await;
    let body = b.c().find(Locator::Css("body")).await.unwrap();
    body.send_keys("\u{E012}").await.unwrap(); // ArrowLeft
    b.wait_attr("#replay-moves", "data-ply", |p| p == (moves.len() - 1).to_string())
        .await;
    b.click("#rp-first").await;
    b.wait_attr("#board", "data-moves", |m| m.is_empty()).await;
    b.client.as_ref().unwrap().clone().close().await.unwrap();
}

#[tokio::test]
async fn the_tournament_page_shows_the_standings_change() {
    if !browser_present() {
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let yaml = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/round_robin.yaml")).unwrap();
    let report = dir.path().join("report");
    // Its own report directory, and 100 times the games, so that it is still
    // playing when the browser looks (the 420 games take seconds).
    let yaml = yaml
        .replace("dir: docs/round-robin", &format!("dir: {}", report.display()))
        .replace("games_per_pair: 20", "games_per_pair: 2000")
        .replace("concurrency: 2", "concurrency: 1"); // a core left for the browser
    assert!(yaml.contains(&report.display().to_string()) && yaml.contains("games_per_pair: 2000"));
    let file = dir.path().join("round_robin.yaml");
    std::fs::write(&file, yaml).unwrap();
    let srv = serve(&["run", file.to_str().unwrap(), "--web", "127.0.0.1:0"], true);
    let b = Browser::start().await;
    b.c().goto(&format!("http://{}/#watch", srv.addr)).await.unwrap();
    let first: u64 = b
        .wait_attr("#watch", "data-done", |d| !d.is_empty())
        .await
        .parse()
        .unwrap();
    let later: u64 = b
        .wait_attr("#watch", "data-done", |d| d.parse::<u64>().is_ok_and(|d| d > first))
        .await
        .parse()
        .unwrap();
    assert!(later > first);
    // A game in progress is drawn, and finished ones with their results.
    b.wait_count("#live figure.mini .piece", 1).await;
    b.wait_count("#recent figure.mini", 1).await;
    let rows = b.c().find_all(Locator::Css("#standings tbody tr")).await.unwrap();
    assert_eq!(rows.len(), 7, "every player has a row");
    let status = b.text("#watch-status").await;
    assert!(status.contains("of 42000 games played"), "{status}");
    b.click("#nav-play").await;
    b.wait_attr("#play", "hidden", |h| h == "false").await;
    b.client.as_ref().unwrap().clone().close().await.unwrap();
    eprintln!("browser tournament test: {:.1} s", started.elapsed().as_secs_f64());
}

/// Writes docs/web/game.png: a game in progress against the shipped
/// AlphaZero (its default profile), as a person sees it.
#[tokio::test]
#[ignore = "writes docs/web/game.png; run on purpose"]
async fn screenshot() {
    if !browser_present() {
        return;
    }
    let srv = serve(&["web", "--bind", "127.0.0.1:0"], false);
    let b = Browser::start().await;
    b.c().set_window_size(720, 1000).await.unwrap();
    b.c().goto(&format!("http://{}/", srv.addr)).await.unwrap();
    b.wait_attr("#status", "textContent", |t| t.contains("New game")).await;
    b.click("#new-game").await;
    for col in [3, 3, 2, 4] {
        b.play(col, false).await;
    }
    b.wait_attr("#board", "data-your-turn", |v| v == "true").await;
    let png = b.c().screenshot().await.unwrap();
    let out = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/web/game.png");
    std::fs::create_dir_all(std::path::Path::new(out).parent().unwrap()).unwrap();
    std::fs::write(out, png).unwrap();
    // The analysis board: a published position by URL, the solution shown.
    let pos = "1562527227511";
    b.c().set_window_size(720, 1150).await.unwrap();
    b.c().goto(&format!("http://{}/?pos={pos}", srv.addr)).await.unwrap();
    b.wait_attr("#board", "data-your-turn", |v| v == "true").await;
    b.click("#show-solution").await;
    b.click("#show-view").await;
    b.wait_attr("#solution", "data-pos", |p| p == pos).await;
    b.wait_attr("#view", "data-pos", |p| p == pos).await;
    let png = b.c().screenshot().await.unwrap();
    std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/web/analysis.png"), png).unwrap();
}
