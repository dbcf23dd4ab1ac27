//! `mode: join` (and `c4sim join`): c4sim's own players as clients of a
//! lobby server. Each listed player gets a connection and the same player
//! actor it would have in a local match; the client tracks the board from
//! `game.action` events (the server never sends it), hands the player a
//! [`TurnView`] on `game.your_turn`, and sends its answer back as a move.
//! So every kind — bots, minimax, external programs, a person at the
//! terminal — plays over the network without knowing it.

use super::codec::{as_sent, parse_server_line, req_line, CodecError, ErrorCode, Event, Method, Named, ServerLine};
use super::lines::{Line, LineReader};
use crate::actors::messages::{Abandon, GameEnded, GameEvent, NewGame, Reply, Shutdown, YourTurn};
use crate::actors::mode::{run_mode, ModeError};
use crate::actors::player::PlayerActor;
use crate::actors::runner::{start_player, Output};
use crate::actors::sinks::{JsonWriter, Renderer};
use crate::game::board::BoardError;
use crate::game::{Answer, Board, BoardConfig, EndReason, Refusal, DEFAULT_LETTERS, DEFAULT_MAX_INVALID};
use crate::players::kinds::RunsAs;
use crate::players::BuildError;
use crate::players::TurnView;
use crate::record::{PlayerResult, Tally};
use crate::scenario::net::{GameKind, JoinSettings};
use crate::scenario::{PlayerSpec, RenderStyle};
use crate::util::seed;
use actix::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;

/// Everything a join run needs.
#[derive(Clone, Debug)]
pub struct JoinConfig {
    pub settings: JoinSettings,
    pub players: Vec<PlayerSpec>,
    pub seed: u64,
    pub out: Output,
}

/// Why one client of a join run stopped before its last match. Its
/// message (the player's name first) is what the run prints for it; the
/// run goes on with its other clients and then fails with exit code 1.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{name}: cannot connect to {addr}: {source}")]
    Connect {
        name: String,
        addr: String,
        source: std::io::Error,
    },
    #[error("{name}: no answer from {addr} within {after:?}")]
    NoAnswer {
        name: String,
        addr: String,
        after: Duration,
    },
    #[error("{name}: lost the server: {source}")]
    Lost { name: String, source: std::io::Error },
    #[error("{name}: the server closed the connection")]
    Closed { name: String },
    #[error("{name}: the server sent an over-long line")]
    LongLine { name: String },
    /// A line that is not a server line.
    #[error("{name}: {source}")]
    Garbled { name: String, source: CodecError },
    /// The body of an event that the client cannot read (`what` it is).
    #[error("{name}: {what}")]
    Unreadable { name: String, what: &'static str },
    /// A refusal the client cannot go on after (a full lobby, a bad move
    /// and a refused leave are handled where they come).
    #[error("{name}: the server refused: {code}: {message}")]
    Refused {
        name: String,
        code: String,
        message: String,
    },
    #[error("{name}: the server's board: {source}")]
    Board { name: String, source: BoardError },
    /// The player could not be started.
    #[error("{0}")]
    Player(#[from] BuildError),
    #[error("a client stopped: {0}")]
    Stopped(String),
}

/// Why a join run as a whole failed (each client's own error is printed
/// as it stops).
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    #[error("error: `mode: join` needs at least one player")]
    NoPlayers,
    #[error("{failed} of {of} clients did not finish")]
    Unfinished { failed: usize, of: usize },
}

/// The player's answer in progress (pinned: actix requests are not `Unpin`).
type Asking = std::pin::Pin<Box<Request<PlayerActor, YourTurn>>>;

/// How long to wait for the server to accept the connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A full lobby is asked again after this long, at most [`FULL_RETRIES`] times.
const FULL_RETRY: Duration = Duration::from_millis(250);
const FULL_RETRIES: u32 = 240;
/// Server lines are short; this only bounds a misbehaving server.
const MAX_SERVER_LINE: usize = 1 << 20;

/// What a request was for, to act on its answer.
#[derive(Clone, Debug)]
enum Pending {
    Hello,
    Login,
    Subscribe,
    Ready,
    Action(i64),
    Leave,
}

/// The client's copy of a match, rebuilt from events.
struct MatchView {
    id: String,
    names: Vec<String>,
    me: usize,
    board: Board,
    moves: Vec<usize>,
    active: Vec<bool>,
    /// Why the last answer was refused, shown with the next question.
    refusal: Option<Refusal>,
    invalid: u32,
}

/// One player's connection and state.
struct Client {
    name: String,
    /// This player's seed (from the scenario seed and its place in the
    /// list); each match reseeds the player from it, see [`match_seed`].
    seed: u64,
    w: OwnedWriteHalf,
    next_id: u64,
    pending: HashMap<String, Pending>,
    game: GameKind,
    matches: u32,
    played: u32,
    number: u64,
    full_retries: u32,
    current: Option<MatchView>,
    tally: Tally,
    show: Show,
}

/// How this client shows itself on standard output.
struct Show {
    json: bool,
    /// Boards and moves (a person's client, or the only client of the run).
    boards: Option<Renderer>,
}

impl Show {
    fn print(&self, line: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    }
    fn json(&self, ev: &crate::events::Event) {
        if self.json {
            self.print(&format!("{}\n", ev.line()));
        }
    }
    fn render(&mut self, ev: &GameEvent) {
        if self.json {
            return;
        }
        if let Some(r) = &mut self.boards {
            let text = r.text(ev);
            self.print(&text);
        }
    }
}

fn result_of(word: &str) -> PlayerResult {
    match word {
        "WIN" => PlayerResult::Win,
        "DRAW" => PlayerResult::Draw,
        _ => PlayerResult::Loss,
    }
}

/// The closest end reason of docs/rules.md for a protocol reason, for players
/// that are told how a game ended (external programs' `GAME_OVER` line).
pub fn end_reason_of(reason: &str) -> EndReason {
    match reason {
        "normal" => EndReason::Win,
        "board_full" => EndReason::Tie,
        "timeout" => EndReason::Timeout,
        "invalid_moves" => EndReason::TooManyInvalid,
        _ => EndReason::Forfeit,
    }
}

/// The seed a player gets at the start of its `number`th match, in `seat`:
/// derived from the player's own seed, so every random choice follows from
/// the scenario `seed` (the determinism rule of every mode), and players of
/// one run, or one player's successive matches, play different games.
pub fn match_seed(player_seed: u64, number: u64, seat: usize) -> u64 {
    seed::derive(player_seed, number, seat as u64)
}

/// The board of a match the server started: its size as the server sent
/// it, the win length from the game's own rules ([`GameKind::board`]), since
/// the protocol does not send that.
pub fn match_board(game: GameKind, players: usize, width: u64, height: u64) -> Result<BoardConfig, BoardError> {
    let rules = game.board(players);
    BoardConfig::new(height as usize, width as usize, rules.win_length)
}

fn int(body: &Option<Map<String, Value>>, key: &str) -> Option<u64> {
    body.as_ref()?.get(key)?.as_u64()
}

fn text<'a>(body: &'a Option<Map<String, Value>>, key: &str) -> Option<&'a str> {
    body.as_ref()?.get(key)?.as_str()
}

impl Client {
    fn unreadable(&self, what: &'static str) -> ClientError {
        ClientError::Unreadable {
            name: self.name.clone(),
            what,
        }
    }

    async fn send(
        &mut self,
        match_id: Option<&str>,
        method: Method,
        params: Option<Value>,
        what: Pending,
    ) -> Result<(), ClientError> {
        self.next_id += 1;
        let id = self.next_id.to_string();
        let line = req_line(&id, match_id, method.as_str(), params.as_ref());
        self.pending.insert(id, what);
        self.w
            .write_all(line.as_bytes())
            .await
            .map_err(|source| ClientError::Lost {
                name: self.name.clone(),
                source,
            })
    }

    async fn subscribe(&mut self) -> Result<(), ClientError> {
        let game = self.game.as_str();
        self.send(
            None,
            Method::Subscribe,
            Some(json!({ "game": game })),
            Pending::Subscribe,
        )
        .await
    }

    /// Shows a person why their answer was refused (the prompt follows).
    fn show_refusal(&mut self) {
        let Some(m) = self.current.as_ref() else { return };
        let Some(refusal) = m.refusal.clone() else { return };
        let ev = GameEvent::Illegal {
            game: self.number,
            seat: m.me,
            name: m.names[m.me].clone(),
            refusal,
            tries_left: DEFAULT_MAX_INVALID.saturating_sub(m.invalid),
        };
        self.show.render(&ev);
    }

    fn view(&mut self) -> Option<TurnView> {
        let m = self.current.as_mut()?;
        Some(TurnView {
            game: self.number,
            board: m.board.clone(),
            seat: m.me,
            seats: m.names.len(),
            letters: DEFAULT_LETTERS.to_vec(),
            moves: m.moves.clone(),
            error: m.refusal.take(),
            tries_left: DEFAULT_MAX_INVALID.saturating_sub(m.invalid).max(1),
        })
    }
}

/// Plays one listed player's matches; returns its tally.
async fn play(cfg: JoinConfig, index: usize) -> Result<Tally, ClientError> {
    let spec = cfg.players[index].clone();
    let name = spec.name.clone();
    let addr = cfg.settings.server.clone();
    let stream = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(source)) => return Err(ClientError::Connect { name, addr, source }),
        Err(_) => {
            return Err(ClientError::NoAnswer {
                name,
                addr,
                after: CONNECT_TIMEOUT,
            })
        }
    };
    let _ = stream.set_nodelay(true);
    let (rd, w) = stream.into_split();
    let mut lines = LineReader::new(BufReader::new(rd), MAX_SERVER_LINE);
    let game = cfg.settings.game;
    let seed = seed::derive(cfg.seed, 0, index as u64);
    let actor = start_player(&spec, seed, cfg.out, game.max_players())?;
    let show_boards = !cfg.out.json
        && cfg.out.style != RenderStyle::None
        && (spec.kind.runs_as() == RunsAs::Human || cfg.players.len() == 1);
    let mut c = Client {
        name: name.clone(),
        seed,
        w,
        next_id: 0,
        pending: HashMap::new(),
        game,
        matches: cfg.settings.matches,
        played: 0,
        number: 0,
        full_retries: 0,
        current: None,
        tally: Tally {
            name: name.clone(),
            ..Default::default()
        },
        show: Show {
            json: cfg.out.json,
            boards: show_boards.then_some(Renderer {
                style: cfg.out.style,
                seats: 2,
            }),
        },
    };
    c.send(None, Method::Hello, Some(json!({ "version": 1 })), Pending::Hello)
        .await?;
    let result = drive(&mut c, &mut lines, &actor).await;
    let _ = actor.send(Shutdown).await;
    let _ = c.w.shutdown().await;
    result.map(|()| c.tally)
}

/// The client's loop: server lines and the player's answers, until the
/// last match is over.
async fn drive(
    c: &mut Client,
    lines: &mut LineReader<BufReader<tokio::net::tcp::OwnedReadHalf>>,
    actor: &Addr<PlayerActor>,
) -> Result<(), ClientError> {
    let mut thinking: Option<Asking> = None;
    loop {
        tokio::select! {
            line = lines.next_line() => {
                let line = match line {
                    Ok(Some(Line::Text(t))) => String::from_utf8_lossy(&t).into_owned(),
                    Ok(Some(Line::TooLong { .. })) => return Err(ClientError::LongLine { name: c.name.clone() }),
                    Ok(None) | Err(_) => return Err(ClientError::Closed { name: c.name.clone() }),
                };
                let msg = parse_server_line(&line).map_err(|source| ClientError::Garbled {
                    name: c.name.clone(),
                    source,
                })?;
                if handle_line(c, msg, actor, &mut thinking).await? {
                    return Ok(());
                }
            }
            reply = async { thinking.as_mut().expect("guarded").await }, if thinking.is_some() => {
                thinking = None;
                answer(c, reply.unwrap_or_else(|_| Reply::Gone("the player stopped".into())), actor, &mut thinking).await?;
            }
        }
    }
}

/// Sends the player's answer, or asks it again when the answer was not a
/// column at all (a person's typo never reaches the server).
async fn answer(
    c: &mut Client,
    reply: Reply,
    actor: &Addr<PlayerActor>,
    thinking: &mut Option<Asking>,
) -> Result<(), ClientError> {
    let Some(m) = c.current.as_ref() else { return Ok(()) };
    let match_id = m.id.clone();
    match reply {
        Reply::Answer(Answer::Column(col)) | Reply::Thinking(Answer::Column(col), _) => {
            c.send(
                Some(&match_id),
                Method::Action,
                Some(json!({ "type": "move", "move": col })),
                Pending::Action(col),
            )
            .await
        }
        Reply::Answer(Answer::Malformed(why)) | Reply::Thinking(Answer::Malformed(why), _) => {
            let m = c.current.as_mut().expect("checked");
            m.invalid += 1;
            if m.invalid >= DEFAULT_MAX_INVALID {
                return c.send(Some(&match_id), Method::GameLeave, None, Pending::Leave).await;
            }
            m.refusal = Some(Refusal::Malformed(why));
            c.show_refusal();
            if let Some(view) = c.view() {
                *thinking = Some(Box::pin(actor.send(YourTurn(view))));
            }
            Ok(())
        }
        Reply::Gone(why) => {
            tracing::info!("{}: leaves {match_id}: {why}", c.name);
            c.send(Some(&match_id), Method::GameLeave, None, Pending::Leave).await
        }
        Reply::Resign => {
            tracing::info!("{}: resigns {match_id}", c.name);
            c.send(Some(&match_id), Method::GameLeave, None, Pending::Leave).await
        }
    }
}

/// Acts on one server line; `true` when this client is done.
async fn handle_line(
    c: &mut Client,
    msg: ServerLine,
    actor: &Addr<PlayerActor>,
    thinking: &mut Option<Asking>,
) -> Result<bool, ClientError> {
    match msg {
        ServerLine::Ok { id, body } => on_ok(c, id, body).await?,
        ServerLine::Err { id, code, message } => on_refused(c, id, code, message).await?,
        ServerLine::Event { match_id, event, body } => {
            return on_event(c, match_id, event, body, actor, thinking).await
        }
    }
    Ok(false)
}

/// A request was accepted: takes the next step of the way into the lobby
/// (hello, then login, then subscribe, then ready).
async fn on_ok(c: &mut Client, id: String, body: Option<Map<String, Value>>) -> Result<(), ClientError> {
    match c.pending.remove(&id) {
        Some(Pending::Hello) => {
            let name = c.name.clone();
            c.send(None, Method::Login, Some(json!({ "player": name })), Pending::Login)
                .await?;
        }
        Some(Pending::Login) => {
            tracing::debug!(
                "{}: logged in (token {} characters)",
                c.name,
                text(&body, "session_token").map_or(0, str::len)
            );
            c.subscribe().await?;
        }
        Some(Pending::Subscribe) => {
            c.full_retries = 0;
            c.send(None, Method::Ready, None, Pending::Ready).await?;
        }
        _ => {}
    }
    Ok(())
}

/// A request was refused: a full lobby is asked again later; an invalid
/// move counts against the player and is shown with the next question;
/// any other refusal of a move or a leave is only logged; anything else
/// ends this client.
async fn on_refused(
    c: &mut Client,
    id: String,
    code: Named<ErrorCode>,
    message: Option<String>,
) -> Result<(), ClientError> {
    let what = c.pending.remove(&id);
    let message = message.unwrap_or_default();
    match (what, &code) {
        (Some(Pending::Subscribe), Named::Known(ErrorCode::LobbyFull)) if c.full_retries < FULL_RETRIES => {
            c.full_retries += 1;
            tokio::time::sleep(FULL_RETRY).await;
            c.subscribe().await?;
        }
        (Some(Pending::Action(col)), Named::Known(ErrorCode::InvalidMove)) => {
            if let Some(m) = c.current.as_mut() {
                m.invalid += 1;
                m.refusal = Some(
                    m.board
                        .check(col)
                        .err()
                        .map_or(Refusal::Malformed(message), Refusal::from),
                );
                c.show_refusal();
            }
        }
        (Some(Pending::Action(_) | Pending::Leave), _) => {
            tracing::warn!("{}: {}: {message}", c.name, as_sent(&code));
        }
        (_, _) => {
            return Err(ClientError::Refused {
                name: c.name.clone(),
                code: as_sent(&code),
                message,
            })
        }
    }
    Ok(())
}

/// Routes one server event to the step it starts; `true` when this client
/// is done (its last match is over).
async fn on_event(
    c: &mut Client,
    match_id: Option<String>,
    event: Named<Event>,
    body: Option<Map<String, Value>>,
    actor: &Addr<PlayerActor>,
    thinking: &mut Option<Asking>,
) -> Result<bool, ClientError> {
    match event {
        Named::Known(event @ (Event::LobbyUpdate | Event::LobbyCountdown)) => {
            tracing::debug!(
                "{}: {event} {}",
                c.name,
                body.map(serde_json::Value::Object).unwrap_or_default()
            );
        }
        Named::Known(Event::MatchStarted) => start_match(c, match_id, &body, actor).await?,
        Named::Known(Event::YourTurn) => {
            if c.current.as_ref().map(|m| Some(&m.id)) == Some(match_id.as_ref()) && thinking.is_none() {
                if let Some(view) = c.view() {
                    *thinking = Some(Box::pin(actor.send(YourTurn(view))));
                }
            }
        }
        Named::Known(Event::Action) => play_action(c, match_id, &body)?,
        Named::Known(Event::PlayerOut) => mark_player_out(c, match_id, &body),
        Named::Known(Event::Result) => return finish_match(c, match_id, &body, actor, thinking).await,
        Named::Unknown(event) => tracing::debug!("{}: unknown event {event}", c.name),
    }
    Ok(false)
}

/// `match.started`: reseeds the player for its new match, shows the
/// start, and sets up the client's copy of the match (the server never
/// sends the board).
async fn start_match(
    c: &mut Client,
    match_id: Option<String>,
    body: &Option<Map<String, Value>>,
    actor: &Addr<PlayerActor>,
) -> Result<(), ClientError> {
    let names: Vec<String> = body
        .as_ref()
        .and_then(|b| b.get("participants"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let (w, h) = (int(body, "width"), int(body, "height"));
    let me = names.iter().position(|n| *n == c.name);
    let (Some(m), Some(me), Some(w), Some(h)) = (match_id, me, w, h) else {
        return Err(c.unreadable("a match start it cannot read"));
    };
    let cfg = match_board(c.game, names.len(), w, h).map_err(|source| ClientError::Board {
        name: c.name.clone(),
        source,
    })?;
    c.number += 1;
    let _ = actor
        .send(NewGame {
            game: c.number,
            seat: me,
            seed: match_seed(c.seed, c.number, me),
        })
        .await;
    c.show.json(&crate::events::Event::JoinedMatch {
        seat: crate::events::ClientSeat {
            player: c.name.clone(),
            match_id: m.clone(),
            game: c.game.as_str().to_string(),
            participants: names.clone(),
            width: w as usize,
            height: h as usize,
        },
    });
    let board = Board::new(cfg);
    c.show.render(&GameEvent::Started {
        game: c.number,
        games: c.matches as u64,
        names: names.clone(),
        cfg,
        opening: Vec::new(),
        board: board.clone(),
        seed: 0,
    });
    c.current = Some(MatchView {
        id: m,
        active: vec![true; names.len()],
        names,
        me,
        board,
        moves: Vec::new(),
        refusal: None,
        invalid: 0,
    });
    Ok(())
}

/// `game.action`: plays a move of the current match on the client's board
/// (warning when it lands elsewhere than the server says) and shows it.
fn play_action(c: &mut Client, match_id: Option<String>, body: &Option<Map<String, Value>>) -> Result<(), ClientError> {
    let Some(m) = c.current.as_mut().filter(|m| Some(&m.id) == match_id.as_ref()) else {
        return Ok(());
    };
    let (player, col, row) = (text(body, "player"), int(body, "move"), int(body, "row"));
    let (Some(seat), Some(col), Some(row)) = (player.and_then(|p| m.names.iter().position(|n| n == p)), col, row)
    else {
        return Err(c.unreadable("a move it cannot read"));
    };
    match m.board.drop_piece(col as usize, seat) {
        Ok(r) if r as u64 == row => {}
        other => tracing::warn!("{}: board out of step with the server: {other:?} vs row {row}", c.name),
    }
    m.moves.push(col as usize);
    if seat == m.me {
        m.invalid = 0;
    }
    let n = m.names.len();
    let next = (1..=n)
        .map(|k| (seat + k) % n)
        .find(|&s| m.active[s])
        .map(|s| (s, m.names[s].clone()));
    let ev = GameEvent::Moved {
        game: c.number,
        seat,
        name: m.names[seat].clone(),
        col: col as usize,
        row: row as usize,
        number: m.moves.len(),
        board: m.board.clone(),
        next,
        note: None,
    };
    c.show.render(&ev);
    Ok(())
}

/// `game.player_out`: takes a seat of the current match out of the turn
/// order (so the next-to-move line skips it) and shows why.
fn mark_player_out(c: &mut Client, match_id: Option<String>, body: &Option<Map<String, Value>>) {
    let Some(m) = c.current.as_mut().filter(|m| Some(&m.id) == match_id.as_ref()) else {
        return;
    };
    if let Some(seat) = text(body, "player").and_then(|p| m.names.iter().position(|n| n == p)) {
        m.active[seat] = false;
        let reason = text(body, "reason").unwrap_or("");
        let ev = GameEvent::Out {
            game: c.number,
            seat,
            name: m.names[seat].clone(),
            reason: end_reason_of(reason),
            resigned: reason == "resigned",
        };
        c.show.render(&ev);
    }
}

/// `game.result`: stops a question still open, tells the player and the
/// tally how the match ended, shows it, and subscribes again unless that
/// was the last match; `true` when it was.
async fn finish_match(
    c: &mut Client,
    match_id: Option<String>,
    body: &Option<Map<String, Value>>,
    actor: &Addr<PlayerActor>,
    thinking: &mut Option<Asking>,
) -> Result<bool, ClientError> {
    let Some(m) = c.current.take().filter(|m| Some(&m.id) == match_id.as_ref()) else {
        return Ok(false);
    };
    if thinking.take().is_some() {
        actor.do_send(Abandon);
    }
    let word = text(body, "result").unwrap_or("LOSS").to_string();
    let reason = text(body, "reason").unwrap_or("").to_string();
    let result = result_of(&word);
    let _ = actor
        .send(GameEnded {
            result,
            reason: end_reason_of(&reason),
        })
        .await;
    match result {
        PlayerResult::Win => c.tally.wins += 1,
        PlayerResult::Draw => c.tally.draws += 1,
        PlayerResult::Loss => c.tally.losses += 1,
    }
    c.played += 1;
    tracing::info!("{}: {} {word} ({reason})", c.name, m.id);
    show_result(c, &m, &word, &reason);
    if c.played >= c.matches {
        return Ok(true);
    }
    c.subscribe().await?;
    Ok(false)
}

/// A finished match on standard output: the `--json` object, or one line
/// of text, so a run shows every match's result whatever its render style.
fn show_result(c: &Client, m: &MatchView, word: &str, reason: &str) {
    c.show.json(&crate::events::Event::Result {
        seat: crate::events::ClientSeat {
            player: c.name.clone(),
            match_id: m.id.clone(),
            game: c.game.as_str().to_string(),
            participants: m.names.clone(),
            width: m.board.cols(),
            height: m.board.rows(),
        },
        result: word.to_string(),
        reason: reason.to_string(),
        moves: m.moves.len(),
    });
    if !c.show.json {
        c.show.print(&format!(
            "{}: match {} ({} players, {}×{}): {word} ({reason}) after {} moves\n",
            c.name,
            m.id,
            m.names.len(),
            m.board.cols(),
            m.board.rows(),
            m.moves.len()
        ));
    }
}

/// Connects every listed player and plays until each has played its
/// matches; fails when a client did.
pub fn join(cfg: JoinConfig) -> Result<(), ModeError> {
    if cfg.players.is_empty() {
        return Err(ModeError::usage(JoinError::NoPlayers));
    }
    run_mode(
        async move {
            let handles: Vec<_> = (0..cfg.players.len())
                .map(|i| actix::spawn(play(cfg.clone(), i)))
                .collect();
            let mut results = Vec::new();
            for h in handles {
                results.push(h.await.unwrap_or_else(|e| Err(ClientError::Stopped(e.to_string()))));
            }
            let mut tallies = Vec::new();
            let mut failed = 0;
            for (i, r) in results.into_iter().enumerate() {
                match r {
                    Ok(t) => tallies.push(t),
                    Err(e) => {
                        eprintln!("error: {e}");
                        tallies.push(Tally {
                            name: cfg.players[i].name.clone(),
                            ..Default::default()
                        });
                        failed += 1;
                    }
                }
            }
            let summary = GameEvent::Summary { tallies };
            let mut out = std::io::stdout().lock();
            if cfg.out.json {
                let _ = writeln!(out, "{}", JsonWriter::event(&summary).line());
            } else {
                let mut r = Renderer {
                    style: cfg.out.style,
                    seats: 2,
                };
                let _ = out.write_all(r.text(&summary).as_bytes());
            }
            let _ = out.flush();
            if failed == 0 {
                Ok(())
            } else {
                Err(ModeError::failed(JoinError::Unfinished {
                    failed,
                    of: cfg.players.len(),
                }))
            }
        },
        || "Interrupted.".into(),
    )
}

#[cfg(test)]
mod tests;
