//! The `agent` kind: a player whose moves come from code that embeds c4sim
//! (a Python object given to `c4sim.run(..., agents={...})`).
//!
//! The embedding program registers each agent under a name for the length
//! of a run ([`register`]); a `{kind: agent, name: NAME}` player plays the
//! agent registered as NAME. The registry is process-wide because players
//! are built deep inside every mode (match runner, tournament lanes, the
//! web page) from their specs alone; a [`Registration`] guard removes the
//! name when the run ends.
//!
//! Every game's question goes to the agent's one [`Gatherer`] thread, which
//! answers everything waiting in one [`Agent::act`] call: concurrent games
//! of a tournament reach a batched policy as one batch, without a timer
//! (questions that arrive while a batch is being answered form the next).

use super::{Strategy, TurnView};
use crate::game::Answer;
use crossbeam_channel::{self as channel, Receiver, Sender};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What an agent sees: the board from the side to move, as the Python
/// package's envs show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    pub rows: usize,
    pub cols: usize,
    /// `rows · cols · 2`, row 0 the top row; channel 0 the side to move's
    /// pieces, channel 1 the opponent's.
    pub planes: Vec<i8>,
    /// `cols`: 1 where the column has room.
    pub mask: Vec<i8>,
}

impl Observation {
    /// The view of the seat asked in `view` (two seats).
    pub fn of(view: &TurnView) -> Observation {
        let b = &view.board;
        let (rows, cols) = (b.rows(), b.cols());
        let mut planes = vec![0; rows * cols * 2];
        for r in 0..rows {
            for c in 0..cols {
                if let Some(s) = b.cell(r, c) {
                    let at = ((rows - 1 - r) * cols + c) * 2 + usize::from(s != view.seat);
                    planes[at] = 1;
                }
            }
        }
        let mask = (0..cols).map(|c| i8::from(b.height(c) < rows)).collect();
        Observation {
            rows,
            cols,
            planes,
            mask,
        }
    }
}

/// Why an agent gave no answer, or cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// The agent's own failure in its own words (a Python exception).
    #[error("{0}")]
    Raised(String),
    /// Asked after its run ended (its registration was dropped).
    #[error("the agent's run has ended")]
    RunEnded,
    #[error("the agent stopped answering")]
    Stopped,
    /// Its batch came after the run ended; the agent was not called.
    #[error("the run has ended")]
    Closed,
    #[error("the agent gave fewer answers than observations")]
    FewerAnswers,
    /// The agent of player `name` failed: that costs it the game.
    #[error("agent `{name}` failed: {why}")]
    Failed {
        name: String,
        #[source]
        why: Box<AgentError>,
    },
    #[error("an agent named `{0}` is already playing in another run")]
    Taken(String),
    /// Its thread could not start (the system's words).
    #[error("agent `{name}`: {why}")]
    NoThread { name: String, why: String },
    /// No agent was registered as `name`; `given` are the names that were.
    #[error(
        "no agent named `{name}` was given (agents are passed in by the program that runs the \
         scenario, e.g. c4sim.run(scenario, agents={{\"{name}\": my_agent}}) in Python; given: {})",
        given_list(given)
    )]
    Unknown { name: String, given: Vec<String> },
}

fn given_list(given: &[String]) -> String {
    if given.is_empty() {
        "none".to_string()
    } else {
        given.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
    }
}

/// Code that chooses columns: one answer per observation, in order. An
/// `Err` is the agent failing (a Python exception): it costs that game.
pub trait Agent: Send + Sync {
    fn act(&self, observations: &[Observation]) -> Vec<Result<Answer, AgentError>>;
}

/// One question waiting for its agent.
struct Question {
    obs: Observation,
    reply: Sender<Result<Answer, AgentError>>,
}

/// The thread that answers an agent's questions in batches.
pub struct Gatherer {
    ask: Sender<Question>,
}

/// Whether the agent's run is still on. The gatherer holds it locked
/// while it calls the agent, so ending a run waits for a call in flight,
/// and no call starts after: the embedding program (Python) may be
/// shutting down once its run has returned.
type Gate = Arc<Mutex<bool>>;

impl Gatherer {
    fn start(name: &str, agent: Arc<dyn Agent>, gate: Gate) -> std::io::Result<Gatherer> {
        let (ask, questions) = channel::unbounded::<Question>();
        std::thread::Builder::new()
            .name(format!("agent {name}"))
            .spawn(move || answer_all(agent.as_ref(), &questions, &gate))?;
        Ok(Gatherer { ask })
    }

    /// The agent's answer to one observation (blocks until its batch is done).
    pub fn ask(&self, obs: Observation) -> Result<Answer, AgentError> {
        let (reply, answer) = channel::bounded(1);
        self.ask
            .send(Question { obs, reply })
            .map_err(|_| AgentError::RunEnded)?;
        answer.recv().map_err(|_| AgentError::Stopped)?
    }
}

/// Answers until every sender is gone: waits for one question, takes every
/// other one already waiting, and answers them in one call (once the run
/// has ended, without calling the agent).
fn answer_all(agent: &dyn Agent, questions: &Receiver<Question>, gate: &Gate) {
    while let Ok(first) = questions.recv() {
        let mut batch = vec![first];
        batch.extend(questions.try_iter());
        let obs: Vec<Observation> = batch.iter().map(|q| q.obs.clone()).collect();
        let open = gate.lock().unwrap_or_else(|e| e.into_inner());
        let answers = if *open {
            agent.act(&obs)
        } else {
            obs.iter().map(|_| Err(AgentError::Closed)).collect()
        };
        drop(open);
        let mut answers = answers.into_iter();
        for q in batch {
            let a = answers.next().unwrap_or(Err(AgentError::FewerAnswers));
            let _ = q.reply.send(a);
        }
    }
}

type Registry = Mutex<HashMap<String, Arc<Gatherer>>>;

fn registry() -> &'static Registry {
    static AGENTS: OnceLock<Registry> = OnceLock::new();
    AGENTS.get_or_init(Default::default)
}

/// Keeps an agent's name registered; dropping it frees the name and ends
/// the agent's calls (it waits for one in flight: drop it where that call
/// can finish, e.g. without Python's GIL held).
pub struct Registration {
    name: String,
    gate: Gate,
}

impl Drop for Registration {
    fn drop(&mut self) {
        registry().lock().unwrap_or_else(|e| e.into_inner()).remove(&self.name);
        *self.gate.lock().unwrap_or_else(|e| e.into_inner()) = false;
    }
}

/// Makes `agent` the player of `{kind: agent, name: NAME}` until the
/// returned guard is dropped; a name already in use by another run is refused.
pub fn register(name: &str, agent: Arc<dyn Agent>) -> Result<Registration, AgentError> {
    let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
    if r.contains_key(name) {
        return Err(AgentError::Taken(name.to_string()));
    }
    let gate: Gate = Arc::new(Mutex::new(true));
    let g = Gatherer::start(name, agent, gate.clone()).map_err(|e| AgentError::NoThread {
        name: name.to_string(),
        why: e.to_string(),
    })?;
    r.insert(name.to_string(), Arc::new(g));
    Ok(Registration {
        name: name.to_string(),
        gate,
    })
}

/// The player of one `agent` entry: asks the registered agent of its name.
pub struct AgentPlayer {
    name: String,
    gatherer: Arc<Gatherer>,
}

impl AgentPlayer {
    /// The player for the agent registered as `name`.
    pub fn new(name: &str) -> Result<AgentPlayer, AgentError> {
        let r = registry().lock().unwrap_or_else(|e| e.into_inner());
        match r.get(name) {
            Some(g) => Ok(AgentPlayer {
                name: name.to_string(),
                gatherer: g.clone(),
            }),
            None => {
                let mut given: Vec<String> = r.keys().cloned().collect();
                given.sort();
                Err(AgentError::Unknown {
                    name: name.to_string(),
                    given,
                })
            }
        }
    }
}

impl Strategy for AgentPlayer {
    fn choose(&mut self, view: &TurnView) -> Answer {
        self.choose_or_quit(view)
            .unwrap_or_else(|e| Answer::Malformed(e.to_string()))
    }

    fn choose_or_quit(&mut self, view: &TurnView) -> Result<Answer, AgentError> {
        self.gatherer
            .ask(Observation::of(view))
            .map_err(|why| AgentError::Failed {
                name: self.name.clone(),
                why: Box::new(why),
            })
    }

    /// Python code may take any time: never on the actor loop.
    fn is_heavy(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{BoardConfig, Game};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Plays the first open column; counts its calls and the largest batch.
    struct First {
        calls: AtomicUsize,
        largest: AtomicUsize,
    }

    impl Agent for First {
        fn act(&self, obs: &[Observation]) -> Vec<Result<Answer, AgentError>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.largest.fetch_max(obs.len(), Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            obs.iter()
                .map(|o| Ok(Answer::Column(o.mask.iter().position(|&m| m == 1).unwrap() as i64)))
                .collect()
        }
    }

    fn view_after(moves: &[usize], seat: usize) -> TurnView {
        let mut g = Game::new(BoardConfig::default(), 2, 3);
        for &c in moves {
            g.submit(Answer::Column(c as i64));
        }
        TurnView::of(&g, 1, seat, &['X', 'O'], None)
    }

    #[test]
    fn observations_are_from_the_side_to_move_with_the_top_row_first() {
        let o = Observation::of(&view_after(&[3, 3, 0], 1));
        let at = |r: usize, c: usize, ch: usize| o.planes[(r * 7 + c) * 2 + ch];
        // Seat 1 to move: seat 0's pieces (3 at the bottom, 0) are channel 1.
        assert_eq!((at(5, 3, 1), at(5, 0, 1), at(4, 3, 0)), (1, 1, 1));
        assert_eq!(o.planes.iter().map(|&x| x as usize).sum::<usize>(), 3);
        assert_eq!(o.mask, vec![1; 7]);
    }

    #[test]
    fn concurrent_questions_are_answered_in_batches_and_names_are_scoped() {
        let agent = Arc::new(First {
            calls: AtomicUsize::new(0),
            largest: AtomicUsize::new(0),
        });
        let reg = register("batched-test", agent.clone()).unwrap();
        assert!(register("batched-test", agent.clone()).is_err());
        let answers: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        let mut p = AgentPlayer::new("batched-test").unwrap();
                        p.choose_or_quit(&view_after(&[0, 0, 0, 0, 0, 0], 0))
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(answers.iter().all(|a| a == &Ok(Answer::Column(1))));
        assert!(agent.largest.load(Ordering::SeqCst) > 1, "no batch held two games");
        assert!(agent.calls.load(Ordering::SeqCst) < 8);
        let mut kept = AgentPlayer::new("batched-test").unwrap();
        let calls = agent.calls.load(Ordering::SeqCst);
        drop(reg);
        let after = kept.choose_or_quit(&view_after(&[], 0));
        assert!(after.is_err_and(|e| e.to_string().contains("the run has ended")));
        assert_eq!(agent.calls.load(Ordering::SeqCst), calls, "no call after the run ended");
        let e = AgentPlayer::new("batched-test").err().unwrap().to_string();
        assert!(e.contains("no agent named `batched-test`"), "{e}");
    }
}
