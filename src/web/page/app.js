// c4sim's page: draws what the server says (docs/web.md) and sends what
// the person does. It decides nothing about a game: every `game` message
// carries the whole position and a version, and a reconnecting page asks
// for the game again (`join`) instead of guessing what it missed.
'use strict';

const $ = (s) => document.querySelector(s);
const GAME_KEY = 'c4sim-game';
const SOLUTION_KEY = 'c4sim-solution';
const VIEW_KEY = 'c4sim-ai-view';
// `?pos=4453&red=person&yellow=Solver`: the position to open (columns from
// 1) and who plays each side, until a game is shown.
const params = new URLSearchParams(location.search);
let wantPos = params.get('pos');
let wantSides = params.get('red') && params.get('yellow') ? [params.get('red'), params.get('yellow')] : null;
let players = [];      // the players the server offers, by name
let viewers = [];      // those whose own view the page can show (`hello`'s `views`)
// `?replay=4453&red=A&yellow=B`: a recorded game to step through, each move
// checked against the solver (`analyze`, one position at a time).
const replay = params.get('replay') === null ? null : {
  moves: digits(params.get('replay')).split('').filter((d) => d).map((d) => Number(d) - 1),
  names: [params.get('red') || 'Red', params.get('yellow') || 'Yellow'],
  at: 0, rows: 6, cols: 7, checked: [], asked: null, // the ply whose position is being analysed
};
// An analysis request's key: its position and the player whose view it
// asks for (`4453|AlphaZero`, or `4453|` for the solution alone).
let analysing = null;   // the key of the analysis running
let shownKey = null;    // the key whose final answer is shown
let busyTries = 0;       // analyses refused `busy` in a row (the server's solvers all at work)
let ws = null;
let backoff = 300;
let game = null;        // the last `game` message's data, with its version as `v`
let watchV = 0;
let aiName = 'The computer';

function send(t, d) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(d === undefined ? { t } : { t, d }));
}

function connect() {
  ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws');
  ws.onopen = () => {
    backoff = 300;
    const id = sessionStorage.getItem(GAME_KEY);
    analysing = null;
    if (replay) { replay.asked = null; checkNext(); return; }
    if (id) send('join', { id });
    else if (wantPos !== null) startAt(wantPos);
    else setStatus('Choose who plays, then press New game.');
    if (view() === 'watch') send('watch');
  };
  ws.onmessage = (e) => handle(JSON.parse(e.data));
  ws.onclose = () => {
    setStatus('Connection lost; reconnecting…');
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 4000);
  };
}

function handle(m) {
  switch (m.t) {
    case 'hello':
      if (m.d.title) { $('#title').textContent = 'c4sim: ' + m.d.title; document.title = m.d.title + ' · c4sim'; }
      if (m.d.player) {
        aiName = m.d.player;
        players = m.d.players || [m.d.player];
        viewers = m.d.views || [];
        fillSides();
      } else {
        $('#setup').hidden = true;
        setStatus('Nobody to play on this server: see Watch.');
      }
      if (replay && m.d.rows) { replay.rows = m.d.rows; replay.cols = m.d.cols; drawReplay(); }
      // An empty board of the right size until a game starts.
      if (!game && !replay && m.d.rows) {
        drawBoard($('#board'), {
          rows: m.d.rows, cols: m.d.cols, cells: Array(m.d.rows).fill('.'.repeat(m.d.cols)),
          line: [], last: null, your_turn: false, legal: [],
        }, playColumn, false);
      }
      break;
    case 'game':
      if (game && game.id === m.d.id && m.v <= game.v) return; // old news
      // A link to another position than the game this tab had: open the link's.
      if (wantPos !== null && !game && posOf(m.d) !== digits(wantPos)) { startAt(wantPos); return; }
      wantPos = null;
      m.d.v = m.v;
      drawGame(m.d);
      break;
    case 'analysis':
      busyTries = 0;
      if (replay) checked(m.d); else drawSolution(m.d);
      break;
    case 'watch':
      if (m.v < watchV) return;
      watchV = m.v;
      drawWatch(m.d);
      break;
    case 'error':
      if (m.d.code === 'no_game') {
        sessionStorage.removeItem(GAME_KEY);
        if (wantPos !== null) { startAt(wantPos); return; }
        if (!game) setStatus('Choose who plays, then press New game.');
      }
      if (m.d.code === 'bad_position') {
        // A bad link: say why and leave the URL as a plain page.
        wantPos = null;
        history.replaceState(null, '', location.pathname + location.hash);
        showError(`That position cannot be opened: ${m.d.message}`);
        if (!game) setStatus('Choose who plays, then press New game.');
        return;
      }
      // Every solver of the server is at work: ask again in a second, for
      // half a minute, before saying so.
      if (m.d.code === 'busy' && (analysing !== null || (replay && replay.asked !== null)) && ++busyTries <= 30) {
        if (analysing !== null) {
          analysing = null;
          $('#solution-note').textContent = 'Solving… (waiting for a free solver)';
          setTimeout(askSolution, 1000);
        }
        if (replay && replay.asked !== null) { replay.asked = null; setTimeout(checkNext, 1000); }
        return;
      }
      if (replay && replay.asked !== null) { replay.asked = null; setTimeout(checkNext, 500); }
      showError(m.d.message);
      break;
  }
}

// --- positions in the URL, and the solution ---------------------------------

function digits(s) { return String(s).replace(/[^0-9]/g, ''); }
// The game's moves as a move string, columns from 1 (boards up to 9 columns).
function movesPos(moves) { return moves.map((c) => c + 1).join(''); }
function posOf(g) { return movesPos(g.moves); }

// A new game at `pos`: the sides the link names, else the person playing
// the side to move there and the server's player the other.
function startAt(pos) {
  wantPos = null;
  game = null;
  const first = digits(pos).length % 2 === 0 ? 'you' : 'ai';
  const d = { first, pos: digits(pos) };
  if (wantSides) d.sides = wantSides;
  wantSides = null;
  send('new', d);
}

// The side menus: a person or any player the server offers (its own by
// default for Yellow, so New game plays it as before).
function fillSides() {
  for (const i of [0, 1]) {
    const sel = $('#side-' + i);
    const keep = sel.value;
    sel.replaceChildren(new Option('Person', 'person'), ...players.map((p) => new Option(p, p)));
    sel.value = keep !== 'person' && players.includes(keep) ? keep : (i === 1 ? players[0] : 'person');
  }
}

// Who plays each side of `g`, for the URL: `person` or the player's name.
function sidesOf(g) {
  return [0, 1].map((i) => (g.people.includes(i) ? 'person' : g.names[i]));
}

// The player whose own view the page shows: the game's player side (the
// one to move when players play both), if the server can show its view.
function viewer() {
  if (!game || !$('#show-view').checked) return null;
  const sides = [0, 1].filter((i) => !game.people.includes(i) && viewers.includes(game.names[i]));
  const i = sides.includes(game.to_move) ? game.to_move : sides[0];
  return i === undefined ? null : game.names[i];
}

function askSolution() {
  const box = $('#solution');
  const live = game && !game.over;
  const on = $('#show-solution').checked && live;
  const who = live ? viewer() : null;
  box.hidden = !on;
  $('#solution-note').hidden = !on;
  $('#view').hidden = who === null;
  $('#view-note').hidden = who === null;
  if (!on && who === null) return;
  const pos = posOf(game);
  const key = `${pos}|${who || ''}`;
  // A new request replaces the page's running search on the server; the
  // old position's messages still on their way are ignored.
  if (analysing === key || shownKey === key) return;
  shownKey = null;
  analysing = key;
  box.dataset.pos = '';
  box.dataset.partial = '';
  $('#view').dataset.pos = '';
  $('#solution-note').textContent = 'Solving…';
  if (who !== null) $('#view-note').textContent = `${who} is thinking…`;
  send('analyze', who === null ? { pos } : { pos, player: who });
}

// What the AI's search says of each column, by kind: AlphaZero its share of
// the visits and the score it expects; MCTS its share; minimax its evaluation.
function viewText(kind, v) {
  if (v === null || v === undefined) return '';
  if (kind === 'alphazero') {
    const share = `${Math.round(100 * v.share)}%`;
    return v.value === null ? share : `${share} · expects ${Math.round(50 * (v.value + 1))}%`;
  }
  if (kind === 'mcts') return `${Math.round(100 * v)}%`;
  return String(v);
}

function drawView(p) {
  const box = $('#view');
  if (!p || p.error) {
    box.replaceChildren();
    if (p) box.dataset.pos = posOf(game);
    $('#view-note').textContent = p ? `No view from ${p.name}: ${p.error}` : '';
    return;
  }
  const cols = Array.isArray(p.columns) ? p.columns : [];
  box.style.setProperty('--cols', cols.length);
  box.replaceChildren(...cols.map((v, c) => {
    const e = document.createElement('span');
    e.className = 'score ai' + (c === p.column ? ' chosen' : '');
    e.textContent = viewText(p.kind, v);
    e.setAttribute('aria-label', `Column ${c + 1}: ${e.textContent || 'full'}` + (c === p.column ? ` (${p.name} would play it)` : ''));
    return e;
  }));
  box.dataset.pos = posOf(game);
  const what = { alphazero: 'share of its search and the score it expects', mcts: 'share of its search', minimax: 'evaluation' }[p.kind] || 'view';
  $('#view-note').textContent = `${p.name}'s ${what} for each column; outlined: the column it would play.` + (p.note ? ` ${p.name}: ${p.note}.` : '');
}

// What a column shows: its exact words; else its outcome ("win", "draw",
// "loss") while the exact score is worked on; else that it is worked on, or
// (the search over) that it was not proven.
function columnText(d, c, full) {
  if (full) return { cls: 'full', text: '' };
  const s = d.scores[c];
  const o = s !== null ? Math.sign(s) : d.outcomes ? d.outcomes[c] : null;
  const cls = o === null || o === undefined ? 'unknown' : o > 0 ? 'win' : o < 0 ? 'loss' : 'draw';
  const working = !d.final && d.final !== undefined && (d.working || []).includes(c);
  if (s !== null) return { cls, text: d.words[c] };
  if (cls !== 'unknown') return { cls: cls + ' pending', text: cls, more: working ? 'working…' : 'score not proven' };
  return { cls, text: working ? 'working…' : 'not proven' };
}

// Each column's score under its column: a word and a sign as well as a
// colour. Messages come as the search goes: outcomes first, then exact
// scores; each holds everything known so far.
function drawSolution(d) {
  // An old position's message (the player's view may come only with later
  // messages, so the position alone decides).
  if (analysing !== null && d.pos !== analysing.split('|')[0]) return;
  const last = d.final !== false;
  if (last) {
    shownKey = analysing !== null ? analysing : `${d.pos}|${d.player ? d.player.name : ''}`;
    analysing = null;
  }
  if (!game || d.pos !== posOf(game)) return;
  const box = $('#solution');
  box.style.setProperty('--cols', d.scores.length);
  box.replaceChildren(...d.scores.map((s, c) => {
    const e = document.createElement('span');
    const full = game.cells.every((row) => row[c] !== '.');
    const t = columnText(d, c, full);
    e.className = 'score ' + t.cls;
    e.textContent = t.text;
    if (t.more) {
      const m = document.createElement('small');
      m.textContent = t.more;
      e.append(document.createElement('br'), m);
    }
    e.dataset.score = s === null ? '' : String(s);
    e.dataset.outcome = t.cls.split(' ')[0];
    e.setAttribute('aria-label', `Column ${c + 1}: ` + (full ? 'full' : t.text + (t.more ? `, ${t.more}` : '')));
    return e;
  }));
  box.dataset.partial = d.pos;
  if (last) box.dataset.pos = d.pos;
  if (!$('#view').hidden && (last || d.player)) drawView(d.player);
  $('#solution-note').textContent = !last
    ? 'Solving… each column shows win, draw or loss as soon as it is proven, then its exact score.'
    : d.proven
      ? 'Exact scores for the side to move (+ win, = draw, − loss), from the perfect solver.'
      : `Not every column was proven within the search's cap (${d.nodes} nodes or a minute): the known ones are shown.`;
}

// --- replays ----------------------------------------------------------------

// The position after the first `n` moves of the replay, as the page draws it.
function positionAfter(n) {
  const { rows, cols, moves } = replay;
  const grid = Array.from({ length: rows }, () => Array(cols).fill('.'));
  const heights = Array(cols).fill(0);
  let last = null;
  moves.slice(0, n).forEach((c, i) => {
    const top = rows - 1 - heights[c]++;
    grid[top][c] = 'RY'[i % 2];
    last = [top, c];
  });
  return { rows, cols, cells: grid.map((r) => r.join('')), line: [], last, your_turn: false, legal: [] };
}

function drawReplay() {
  const r = replay;
  drawBoard($('#board'), positionAfter(r.at), playColumn, false);
  $('#board').dataset.moves = r.moves.slice(0, r.at).join(',');
  const list = $('#replay-moves');
  list.replaceChildren(...r.moves.map((c, i) => {
    const li = document.createElement('li');
    li.textContent = `${r.names[i % 2]}: column ${c + 1}` + (r.checked[i] ? r.checked[i].text : '');
    li.classList.toggle('current', i === r.at - 1);
    li.classList.toggle('mistake', !!(r.checked[i] && r.checked[i].mistake));
    li.dataset.ply = i;
    li.addEventListener('click', () => { r.at = i + 1; drawReplay(); });
    return li;
  }));
  list.dataset.ply = r.at;
  list.dataset.checked = r.checked.filter((x) => x).length;
  list.dataset.mistakes = r.moves.map((_, i) => i).filter((i) => r.checked[i] && r.checked[i].mistake).join(',');
  const done = r.checked.filter((x) => x).length;
  setStatus(`Replay: ${r.names[0]} (red) against ${r.names[1]} (yellow), move ${r.at} of ${r.moves.length}` +
    (done < r.moves.length ? `; checking moves against the solver (${done} of ${r.moves.length})…` : '; every move checked.'));
}

// Asks the solver about the next position not yet checked.
function checkNext() {
  const i = replay.checked.length;
  if (i >= replay.moves.length || replay.asked !== null) return;
  replay.asked = i;
  send('analyze', { pos: movesPos(replay.moves.slice(0, i)) });
}

// A move changed the verdict when its column scores worse in kind (win,
// draw, loss) than the best column known: a win thrown to a draw or a
// loss, a draw thrown to a loss. A column not proven is not judged.
function checked(d) {
  const r = replay;
  const i = r.asked;
  if (i === null || d.pos !== movesPos(r.moves.slice(0, i))) return;
  // Judged once every open column's outcome is known (or the search is over).
  const outs = d.outcomes || d.scores.map((s) => (s === null ? null : Math.sign(s)));
  if (d.final === false && !(d.working || []).every((c) => outs[c] !== null)) return;
  r.asked = null;
  const m = r.moves[i];
  const known = outs.filter((o) => o !== null);
  const best = known.length ? Math.max(...known) : null;
  const kind = (o) => (o > 0 ? 'a win' : o < 0 ? 'a loss' : 'a draw');
  const say = (c) => (d.words[c] ? `${kind(outs[c])} (${d.words[c]})` : kind(outs[c]));
  let entry = { mistake: false, text: '' };
  if (outs[m] === null || best === null) {
    entry.text = ' (not proven)';
  } else if (outs[m] < best) {
    const worded = outs.findIndex((o, c) => o === best && d.words[c]);
    entry = { mistake: true, text: ` — threw ${say(worded >= 0 ? worded : outs.indexOf(best))} to ${say(m)}` };
  }
  r.checked[i] = entry;
  drawReplay();
  checkNext();
}

function setStatus(text) { $('#status').textContent = text; }
function showError(text) {
  const e = $('#error');
  e.textContent = text;
  e.hidden = false;
  clearTimeout(showError.t);
  showError.t = setTimeout(() => { e.hidden = true; }, 4000);
}

// --- the board -----------------------------------------------------------

function piece(letter, classes) {
  const p = document.createElement('span');
  p.className = 'piece ' + letter + (classes ? ' ' + classes : '');
  p.textContent = letter;
  p.setAttribute('aria-hidden', 'true');
  return p;
}

const COLOURS = { R: 'red', Y: 'yellow', B: 'blue', G: 'green', P: 'purple', O: 'orange', N: 'brown', K: 'black', W: 'white' };

// Draws `g` into `el`, reusing the cells already there: a piece that is
// new in its cell gets the drop animation (with `animate`), one already
// there is left alone, so a redraw never replays a fall. `play`, when
// given, makes the columns buttons that call it.
function drawBoard(el, g, play, animate) {
  const shape = g.rows + 'x' + g.cols;
  if (el.dataset.shape !== shape) {
    el.dataset.shape = shape;
    el.style.setProperty('--cols', g.cols);
    el.style.setProperty('--rows', g.rows);
    el.replaceChildren();
    for (let c = 0; c < g.cols; c++) {
      const col = document.createElement(play ? 'button' : 'div');
      col.className = 'col';
      if (play) {
        col.type = 'button';
        col.dataset.col = c;
        col.addEventListener('click', () => play(c));
      }
      for (let r = 0; r < g.rows; r++) {
        const cell = document.createElement('span');
        cell.className = 'cell';
        const hole = document.createElement('span');
        hole.className = 'hole';
        cell.appendChild(hole);
        col.appendChild(cell);
      }
      el.appendChild(col);
    }
  }
  const key = (r, c) => r + ',' + c;
  const line = new Set(g.line.map(([r, c]) => key(r, c)));
  const last = g.last ? key(g.last[0], g.last[1]) : null;
  for (let c = 0; c < g.cols; c++) {
    const col = el.children[c];
    let free = 0;
    const said = [];
    for (let r = 0; r < g.rows; r++) {
      const ch = g.cells[r][c];
      const hole = col.children[r].firstChild;
      let p = hole.firstChild;
      if (ch === '.') {
        free++;
        if (p) hole.replaceChildren();
        continue;
      }
      if (!p || p.dataset.letter !== ch) {
        p = piece(ch, animate ? 'drop' : '');
        p.dataset.letter = ch;
        p.style.setProperty('--fall', r + 1);
        hole.replaceChildren(p);
      }
      p.classList.toggle('last', key(r, c) === last);
      p.classList.toggle('win', line.has(key(r, c)));
      said.push((COLOURS[ch] || ch) + (line.has(key(r, c)) ? ' (winning line)' : ''));
    }
    const bottomUp = said.reverse().join(', ') || 'empty';
    if (play) {
      const playable = g.your_turn && g.legal.includes(c);
      col.classList.toggle('playable', playable);
      col.setAttribute('aria-disabled', playable ? 'false' : 'true');
      col.setAttribute('aria-label', `Column ${c + 1}: ${bottomUp}${said.length ? ' from the bottom' : ''}; ${free} free` +
        (playable && c < 9 ? `. Press ${c + 1} to play here.` : ''));
    } else {
      col.setAttribute('aria-label', `Column ${c + 1}: ${bottomUp}`);
    }
  }
}

function playColumn(c) {
  if (!game || !game.your_turn || !game.legal.includes(c)) return;
  game.your_turn = false; // one click, one move
  $('#board').dataset.yourTurn = 'false';
  send('move', { id: game.id, col: c, v: game.v });
}

function drawGame(g) {
  const prev = game;
  game = g;
  sessionStorage.setItem(GAME_KEY, g.id);
  // The URL follows the game: a link or a reload shows this position.
  const [red, yellow] = sidesOf(g).map(encodeURIComponent);
  history.replaceState(null, '', `?pos=${posOf(g)}&red=${red}&yellow=${yellow}` + location.hash);
  // One person: "you" against the other side; two: a hot seat; none: players.
  const people = g.people || [];
  const one = people.length === 1;
  const ai = one ? 1 - g.you : -1;
  if (one) aiName = g.names[ai];
  // Falls are animated within one game, not when a game is (re)loaded.
  const sameGame = prev && prev.id === g.id;
  const board = $('#board');
  drawBoard(board, g, playColumn, sameGame);
  board.dataset.moves = g.moves.join(',');
  board.dataset.yourTurn = String(g.your_turn);
  board.dataset.over = String(g.over);
  const side = (s) => `${COLOURS['RY'[s]]} (${'RY'[s]})`;
  board.setAttribute('aria-label', `Board, ${g.rows} rows by ${g.cols} columns` + (one ? `; you are ${side(g.you)}` : ''));
  $('#resign').disabled = g.over || !one;
  $('#undo').hidden = people.length !== 2;
  $('#review').hidden = !g.over;
  $('#undo').disabled = people.length !== 2 || g.moves.length === 0;
  const you = one ? `You are ${side(g.you)}. ` : '';
  const mover = g.to_move === null ? '' : g.names[g.to_move];
  const refused = g.refusal ? `Refused: ${g.refusal}. ` : '';
  if (g.over) setStatus(g.result.text + '.');
  else if (g.your_turn && one) setStatus(you + refused + `Your move: click a column or press 1–${Math.min(g.cols, 9)}.`);
  else if (g.your_turn) setStatus(refused + `${g.names[g.to_move]} (${'RY'[g.to_move]}) to move: click a column or press 1–${Math.min(g.cols, 9)}.`);
  else setStatus(you + `${mover} is thinking…`);
  // The AI's note on its last move.
  let note = '';
  for (let i = g.moves.length - 1; i >= 0; i--) {
    if (!people.includes(i % 2)) { if (g.notes[i]) note = `${g.names[i % 2]} on its move ${i + 1}: ${g.notes[i]}`; break; }
  }
  $('#note').textContent = note;
  const list = $('#moves');
  list.replaceChildren();
  g.moves.forEach((col, i) => {
    const li = document.createElement('li');
    li.textContent = `${g.names[i % 2]}: column ${col + 1}` + (g.notes[i] ? ` (${g.notes[i]})` : '');
    list.appendChild(li);
  });
  askSolution();
}

// --- watching --------------------------------------------------------------

function mini(g) {
  const box = document.createElement('figure');
  box.className = 'mini';
  const b = document.createElement('div');
  b.className = 'board';
  drawBoard(b, g, null, false);
  const cap = document.createElement('figcaption');
  const who = g.names.map((n, i) => `${n} (${'RYBGPONKW'[i]})`).join(' vs ');
  cap.textContent = `Game ${g.id}: ${who}` + (g.over ? ` — ${g.result.text}` : ` — move ${g.moves.length + 1}`);
  box.setAttribute('aria-label', cap.textContent);
  box.append(b, cap);
  return box;
}

function drawWatch(d) {
  const st = $('#watch-status');
  if (!d.title) {
    st.textContent = 'Nothing to watch on this server. Start a tournament with `c4sim run FILE --web ADDR` or a lobby server with `c4sim serve --web ADDR` and open its page.';
  } else if (d.kind === 'tournament') {
    st.textContent = `${d.title}: ${d.done} of ${d.total} games played.`;
  } else {
    st.textContent = `${d.title}: ${d.done} matches finished.`;
  }
  $('#watch').dataset.done = d.done;
  const table = $('#standings');
  table.hidden = d.standings.length === 0;
  const body = table.querySelector('tbody');
  body.replaceChildren();
  d.standings.forEach((p, i) => {
    const tr = document.createElement('tr');
    for (const v of [i + 1, p.name, p.games, p.wins, p.draws, p.losses, (100 * p.score).toFixed(1) + '%']) {
      const td = document.createElement('td');
      td.textContent = v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  });
  $('#live').replaceChildren(...d.live.map(mini));
  $('#recent').replaceChildren(...d.recent.map(mini));
}

// --- views and input ------------------------------------------------------

function view() { return location.hash === '#watch' ? 'watch' : 'play'; }

function showView() {
  const v = view();
  $('#play').hidden = v !== 'play';
  $('#watch').hidden = v !== 'watch';
  for (const [id, on] of [['#nav-play', v === 'play'], ['#nav-watch', v === 'watch']]) {
    if (on) $(id).setAttribute('aria-current', 'page'); else $(id).removeAttribute('aria-current');
  }
  if (v === 'watch') send('watch');
}

$('#setup').addEventListener('submit', (e) => {
  e.preventDefault();
  game = null;
  send('new', { first: 'you', sides: [$('#side-0').value, $('#side-1').value] });
});
$('#undo').addEventListener('click', () => { if (game) send('undo', { id: game.id }); });
$('#review').addEventListener('click', () => {
  if (!game) return;
  const [red, yellow] = game.names.map(encodeURIComponent);
  sessionStorage.removeItem(GAME_KEY);
  location.href = `/?replay=${posOf(game)}&red=${red}&yellow=${yellow}`;
});
const step = (to) => { if (replay) { replay.at = Math.max(0, Math.min(replay.moves.length, to)); drawReplay(); } };
$('#rp-first').addEventListener('click', () => step(0));
$('#rp-prev').addEventListener('click', () => step(replay.at - 1));
$('#rp-next').addEventListener('click', () => step(replay.at + 1));
$('#rp-last').addEventListener('click', () => step(replay.moves.length));
if (replay) {
  $('#setup').hidden = true;
  $('#replay-bar').hidden = false;
  $('#replay-moves').hidden = false;
  $('#moves-box').hidden = true;
  drawReplay();
}
$('#resign').addEventListener('click', () => { if (game && !game.over) send('resign', { id: game.id }); });
$('#show-solution').checked = localStorage.getItem(SOLUTION_KEY) === 'on';
$('#show-solution').addEventListener('change', (e) => {
  localStorage.setItem(SOLUTION_KEY, e.target.checked ? 'on' : 'off');
  askSolution();
});
$('#show-view').checked = localStorage.getItem(VIEW_KEY) === 'on';
$('#show-view').addEventListener('change', (e) => {
  localStorage.setItem(VIEW_KEY, e.target.checked ? 'on' : 'off');
  askSolution();
});
document.addEventListener('keydown', (e) => {
  if (view() !== 'play' || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.target && e.target.tagName === 'INPUT' && e.target.type === 'text') return;
  if (replay) {
    const to = { ArrowLeft: replay.at - 1, ArrowRight: replay.at + 1, Home: 0, End: replay.moves.length }[e.key];
    if (to !== undefined) { e.preventDefault(); step(to); }
    return;
  }
  if (/^[1-9]$/.test(e.key)) playColumn(Number(e.key) - 1);
});
window.addEventListener('hashchange', showView);
showView();
connect();
