//! The search tree and PUCT search, on small positions and a uniform or
//! trained evaluator.

use super::*;
use crate::az::inference::CpuEvaluator;
use crate::az::inference::Folded;
use crate::az::network::{NetShape, PolicyValueNet};
use crate::game::BoardConfig;
use candle_core::Device;
use rand::SeedableRng;
use std::sync::Arc;

/// A network that knows nothing: equal logits, value 0.
struct Uniform;
impl Evaluate for Uniform {
    fn evaluate(&mut self, _: &[f32], n: usize, logits: &mut Vec<f32>, values: &mut Vec<f32>) {
        logits.clear();
        logits.resize(n * 16, 0.0);
        values.clear();
        values.resize(n, 0.0);
    }
}

fn untrained() -> CpuEvaluator {
    let shape = NetShape {
        rows: 6,
        cols: 7,
        blocks: 2,
        channels: 32,
        value_hidden: 32,
        reply_head: false,
    };
    let net = PolicyValueNet::new(shape, 1, &Device::Cpu).unwrap();
    CpuEvaluator::new(Arc::new(Folded::from_net(&net).unwrap()))
}

/// The plain search (no prover, c_puct 2.5) with a cache of `cache`
/// entries.
fn plain_search(tree: &mut Tree<u64>, g: &Geometry<u64>, eval: &mut dyn Evaluate, cache: usize, sims: u32) {
    search(tree, g, eval, &mut Cache::new(cache), sims, 2.5, &mut NoProver);
}

fn best_after(moves: &[usize], eval: &mut dyn Evaluate, sims: u32) -> (usize, RootInfo) {
    let g = Geometry::<u64>::new(BoardConfig::default());
    let pos = Position::from_moves(&g, moves).unwrap();
    let mut tree = Tree::new(pos);
    plain_search(&mut tree, &g, eval, 10_000, sims);
    let info = tree.root_info(7);
    (tree.best_move(), info)
}

#[test]
fn untrained_network_takes_a_win_in_one() {
    // Red: 0,1,2 on the bottom row; Yellow stacked on them. Red to move wins at 3.
    let moves = [0, 0, 1, 1, 2, 2];
    let (col, info) = best_after(&moves, &mut untrained(), 300);
    assert_eq!(col, 3, "{info:?}");
    assert!(info.value > 0.5, "{info:?}");
    // Vertical: Red has three in column 6.
    let (col, _) = best_after(&[6, 0, 6, 1, 6, 0], &mut untrained(), 300);
    assert_eq!(col, 6);
}

#[test]
fn untrained_network_blocks_a_loss_in_one() {
    // Yellow threatens column 5 horizontally (2,3,4 on the bottom); Red to move.
    let moves = [1, 2, 0, 3, 6, 4];
    let (col, info) = best_after(&moves, &mut untrained(), 400);
    assert_eq!(col, 5, "{info:?}");
    // A vertical threat in column 1, with the uniform network too.
    let (col, info) = best_after(&[3, 1, 3, 1, 5, 1], &mut Uniform, 400);
    assert_eq!(col, 1, "{info:?}");
}

#[test]
fn legal_moves_only_and_visits_add_up() {
    let g = Geometry::<u64>::new(BoardConfig::default());
    // Column 0 full.
    let pos = Position::from_moves(&g, &[0, 0, 0, 0, 0, 0]).unwrap();
    let mut tree = Tree::new(pos);
    plain_search(&mut tree, &g, &mut Uniform, 0, 200);
    let info = tree.root_info(7);
    assert_eq!(info.visits[0], 0);
    // 1 root expansion + 200 simulations.
    assert_eq!(tree.root_visits(), 201);
    assert_eq!(info.visits.iter().sum::<u32>(), 200);
}

#[test]
fn advance_keeps_the_subtree() {
    let g = Geometry::<u64>::new(BoardConfig::default());
    let mut tree = Tree::new(Position::<u64>::empty());
    plain_search(&mut tree, &g, &mut Uniform, 0, 300);
    let info = tree.root_info(7);
    let col = most_visited(&info.visits);
    let kept = info.visits[col];
    let before = tree.len();
    tree.advance(&g, col);
    assert_eq!(tree.root_visits(), kept);
    assert!(tree.len() < before);
    assert_eq!(*tree.root_pos(), Position::<u64>::empty().play(&g, col).0);
    let sub = tree.root_info(7);
    assert_eq!(sub.visits.iter().sum::<u32>() + 1, kept);
    // Searching on continues from there.
    plain_search(&mut tree, &g, &mut Uniform, 0, 50);
    assert_eq!(tree.root_visits(), kept + 50);
}

#[test]
fn noise_changes_priors_but_keeps_a_distribution() {
    let g = Geometry::<u64>::new(BoardConfig::default());
    let mut tree = Tree::new(Position::<u64>::empty());
    plain_search(&mut tree, &g, &mut Uniform, 0, 0);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    tree.add_root_noise(&mut rng, 0.5, 0.25);
    let root = tree.nodes[0];
    let priors: Vec<f32> = (0..7)
        .map(|i| tree.nodes[(root.first_child + i) as usize].prior)
        .collect();
    assert!((priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    assert!(priors.iter().any(|p| (p - 1.0 / 7.0).abs() > 1e-3));
}

/// Tempered priors are softmax(logits / t): t = 2 of logits [2, 0, …]
/// gives e^1 against 1 for the rest; t = 1 leaves them as they are.
#[test]
fn tempered_root_priors_are_the_softmax_of_logits_over_t() {
    let g = Geometry::<u64>::new(BoardConfig::default());
    let mut tree = Tree::new(Position::<u64>::empty());
    let logits = [2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    tree.expand(&g, 0, &Position::<u64>::empty(), &logits);
    let priors = |tree: &Tree<u64>| tree.root_priors(7);
    let before = priors(&tree);
    tree.temper_root(1.0);
    assert_eq!(priors(&tree), before);
    tree.temper_root(2.0);
    let e = 1f32.exp();
    let want: Vec<f32> = (0..7).map(|c| if c == 0 { e } else { 1.0 } / (e + 6.0)).collect();
    for (p, w) in priors(&tree).iter().zip(&want) {
        assert!((p - w).abs() < 1e-5, "{:?} against {want:?}", priors(&tree));
    }
}

#[test]
fn the_solver_proves_a_double_threat_and_plays_it() {
    let g = Geometry::<u64>::new(BoardConfig::default());
    // Red has 2 and 3 on the bottom row, 1 and 4 open beside them:
    // playing either makes two threats at once.
    let pos = Position::from_moves(&g, &[2, 2, 3, 3]).unwrap();
    let mut tree = Tree::new(pos);
    plain_search(&mut tree, &g, &mut Uniform, 10_000, 20_000);
    assert!(tree.root_proven(), "a win in 3 plies is proven");
    assert!(tree.root_visits() < 20_000, "the search stops once it is proven");
    let col = tree.best_move();
    assert!(col == 1 || col == 4, "{col}");
    assert_eq!(tree.root_info(7).q[col], Some(1.0));
    // The target is all on the proven win, though other moves had visits.
    let visits = tree.root_info(7).visits;
    assert!(visits.iter().enumerate().any(|(c, &v)| c != col && v > 0), "{visits:?}");
    let mut want = vec![0.0; 7];
    want[col] = 1.0;
    assert_eq!(tree.policy_target(7), want);
}

#[test]
fn the_policy_target_leaves_out_proven_losses() {
    let g = Geometry::<u64>::new(BoardConfig::default());
    // Red has 2 and 3 of the bottom row, Yellow to move: anything but 1
    // or 4 lets Red make two threats at once. The search proves such
    // moves lost while the root stays open.
    let pos = Position::from_moves(&g, &[2, 6, 3]).unwrap();
    let mut checked = 0;
    for sims in [200, 1000, 3000, 10_000] {
        let mut tree = Tree::new(pos);
        plain_search(&mut tree, &g, &mut Uniform, 10_000, sims);
        let t = tree.policy_target(7);
        assert!((t.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{t:?}");
        let info = tree.root_info(7);
        for c in 0..7 {
            if info.q[c] == Some(-1.0) && !tree.root_proven() {
                assert!(info.visits[c] > 0);
                assert_eq!(t[c], 0.0, "{sims}: column {c} is proven lost: {t:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "some visited move was proven lost");
}

/// An empty 6 × 7 root expanded with prior 0.6 on column 3 and 0.4 / 6
/// on each other column; child `c` is node `1 + c`.
fn root_with_a_favourite() -> (Geometry<u64>, Tree<u64>) {
    let g = Geometry::<u64>::new(BoardConfig::default());
    let pos = Position::from_moves(&g, &[]).unwrap();
    let mut tree = Tree::new(pos);
    let mut logits = [(0.4f32 / 6.0).ln(); 7];
    logits[3] = 0.6f32.ln();
    tree.expand(&g, 0, &pos, &logits);
    (g, tree)
}

/// `n` visits to the root's child for column `col`, each worth `q` to
/// the player to move at the root.
fn visit(tree: &mut Tree<u64>, col: u32, n: u32, q: f32) {
    for _ in 0..n {
        // `backup` takes the value for the player to move at the leaf.
        tree.backup(&[0, 1 + col], -q);
    }
}

#[test]
fn forced_playouts_owe_each_child_sqrt_k_p_n_visits() {
    let (_, mut tree) = root_with_a_favourite();
    assert_eq!(tree.forced_root_column(2.0), None, "nothing is owed before any visit");
    visit(&mut tree, 3, 100, 0.0);
    // Each other child is owed sqrt(2 · 0.0667 · 100) = 3.65 visits; the
    // first of equals goes first. Column 3 has more than its 10.95.
    assert_eq!(tree.forced_root_column(2.0), Some(0));
    assert_eq!(tree.forced_root_column(0.0), None, "k = 0 is off");
    visit(&mut tree, 0, 4, 0.0);
    assert_eq!(tree.forced_root_column(2.0), Some(1));
    for c in [1, 2, 4, 5, 6] {
        visit(&mut tree, c, 4, 0.0);
    }
    // N = 124 now owes each 4.07: column 0 (4 visits) is short again.
    assert_eq!(tree.forced_root_column(2.0), Some(0));
    visit(&mut tree, 0, 1, 0.0);
    for c in [1, 2, 4, 5, 6] {
        visit(&mut tree, c, 1, 0.0);
    }
    assert_eq!(tree.forced_root_column(2.0), None, "every child has what it is owed");
}

#[test]
fn policy_target_pruning_takes_back_forced_visits_only() {
    let (_, mut tree) = root_with_a_favourite();
    visit(&mut tree, 3, 100, 0.5); // the favourite, and good
    visit(&mut tree, 0, 4, -0.5); // forced visits to a bad move
    visit(&mut tree, 5, 30, 0.45); // a move that earned its visits
    let plain = tree.policy_target(7);
    assert!((plain[0] - 4.0 / 134.0).abs() < 1e-6, "{plain:?}");
    assert_eq!(
        tree.pruned_policy_target(7, 2.5, 0.0),
        plain,
        "k = 0 is the plain target"
    );
    let t = tree.pruned_policy_target(7, 2.5, 2.0);
    assert!((t.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{t:?}");
    // Column 0 keeps under one visit (its PUCT score would pass the
    // favourite's below 0.65 visits) and drops out. Column 5 gives back
    // its forced sqrt(2 · 0.0667 · 134) = 4.23 visits, 25.77 left: PUCT
    // alone would have given it at least 7.7.
    assert_eq!(t[0], 0.0, "{t:?}");
    let kept = 30.0 - (2.0f32 * 0.4 / 6.0 * 134.0).sqrt();
    assert!((t[5] - kept / (100.0 + kept)).abs() < 1e-4, "{t:?}");
    assert!((t[3] - 100.0 / (100.0 + kept)).abs() < 1e-4, "{t:?}");
    assert!(t[3] > plain[3] && t[5] < plain[5]);
}

#[test]
fn pruning_keeps_visits_puct_needed() {
    // A child better than the favourite so far: PUCT would have given it
    // most of its visits anyway, so pruning takes back fewer than forced.
    let (_, mut tree) = root_with_a_favourite();
    visit(&mut tree, 3, 20, 0.1);
    visit(&mut tree, 6, 6, 0.32);
    let t = tree.pruned_policy_target(7, 2.5, 2.0);
    let forced = (2.0f32 * 0.4 / 6.0 * 26.0).sqrt(); // 1.86
    let best = 0.1 + 2.5 * 0.6 * 26f32.sqrt() / 21.0;
    let needed = 2.5 * (0.4 / 6.0) * 26f32.sqrt() / (best - 0.32) - 1.0; // 4.89
    assert!(
        needed > 6.0 - forced && needed < 6.0,
        "the case tests the PUCT bound: {needed}"
    );
    let left = needed;
    assert!((t[6] - left / (20.0 + left)).abs() < 1e-4, "{t:?}, {left}");
}

#[test]
fn the_solver_proves_a_lost_position() {
    let g = Geometry::<u64>::new(BoardConfig::default());
    // Red has 1, 2, 3 on the bottom row; Yellow to move blocks one end
    // and loses at the other.
    let pos = Position::from_moves(&g, &[1, 1, 2, 2, 3]).unwrap();
    let mut tree = Tree::new(pos);
    plain_search(&mut tree, &g, &mut Uniform, 10_000, 5_000);
    assert!(tree.root_proven());
    let info = tree.root_info(7);
    assert!(info.q.iter().all(|q| *q == Some(-1.0)), "{info:?}");
    // Every move loses, so the move is still a legal one.
    assert!(tree.best_move() < 7);
}

/// Visits and values of every node are consistent: each expanded node
/// has one visit more than its children together (its own expansion),
/// and mean values stay within [−1, 1] — no virtual loss left behind.
fn assert_consistent(tree: &Tree<u64>) {
    for nd in &tree.nodes {
        assert!(nd.value_sum.abs() <= nd.visits as f32 + 1e-3);
        let kids = tree.children(nd);
        if !kids.is_empty() && nd.proven == UNKNOWN {
            let sum: u32 = kids.iter().map(|c| c.visits).sum();
            assert_eq!(sum + 1, nd.visits);
        }
    }
}

#[test]
fn batched_search_takes_back_its_virtual_losses() {
    let g = Geometry::<u64>::new(BoardConfig::default());
    let pos = Position::from_moves(&g, &[3, 3]).unwrap();
    let (mut one, mut eight) = (Tree::new(pos), Tree::new(pos));
    let mut eval = untrained();
    search_batched(&mut one, &g, &mut eval, &mut Cache::new(0), 600, 2.5, 1, &mut NoProver);
    search_batched(
        &mut eight,
        &g,
        &mut eval,
        &mut Cache::new(0),
        600,
        2.5,
        8,
        &mut NoProver,
    );
    assert_consistent(&one);
    assert_consistent(&eight);
    assert_eq!(one.root_visits(), 601);
    assert_eq!(eight.root_visits(), 601);
    // Batch 1 is the plain search, node for node.
    let mut plain = Tree::new(pos);
    plain_search(&mut plain, &g, &mut eval, 0, 600);
    assert_eq!(plain.root_info(7).visits, one.root_info(7).visits);
}

#[test]
fn batched_search_still_finds_a_win_in_one() {
    let moves = [0, 0, 1, 1, 2, 2];
    let g = Geometry::<u64>::new(BoardConfig::default());
    let mut tree = Tree::new(Position::from_moves(&g, &moves).unwrap());
    search_batched(
        &mut tree,
        &g,
        &mut untrained(),
        &mut Cache::new(1000),
        300,
        2.5,
        8,
        &mut NoProver,
    );
    assert_eq!(tree.best_move(), 3);
}

/// Proves one thing: after the root's move to column 3 the side to move
/// (the root's opponent) has lost.
struct ThreeWins(u32);
impl Prover for ThreeWins {
    fn wants(&self, _: usize) -> bool {
        true
    }

    fn prove(&mut self, columns: &[usize]) -> Option<f32> {
        self.0 += 1;
        (columns == [3]).then_some(-1.0)
    }
}

#[test]
fn a_proven_leaf_is_exact_in_the_tree_and_ends_the_search() {
    // The empty board: nothing to find by the game's rules alone.
    let g = Geometry::<u64>::new(BoardConfig::default());
    for batch in [1, 8] {
        let mut tree = Tree::new(Position::empty());
        let mut prover = ThreeWins(0);
        search_batched(
            &mut tree,
            &g,
            &mut Uniform,
            &mut Cache::new(0),
            5_000,
            2.5,
            batch,
            &mut prover,
        );
        assert!(tree.root_proven(), "batch {batch}");
        assert_eq!(tree.best_move(), 3, "batch {batch}");
        let info = tree.root_info(7);
        assert_eq!(info.value, 1.0);
        assert_eq!(info.q[3], Some(1.0));
        // It stopped as soon as column 3 was offered: far fewer than
        // the 5,000 simulations.
        assert!(tree.root_visits() < 20, "batch {batch}: {}", tree.root_visits());
        assert!(prover.0 >= 1);
        assert_consistent(&tree);
    }
    // Without the prover the same search proves nothing.
    let mut tree = Tree::new(Position::empty());
    search_batched(
        &mut tree,
        &g,
        &mut Uniform,
        &mut Cache::new(0),
        500,
        2.5,
        8,
        &mut NoProver,
    );
    assert!(!tree.root_proven());
}

#[test]
fn masked_softmax_ignores_illegal_columns() {
    let mut out = [0f32; 3];
    masked_softmax(&[100.0, 0.0, 0.0], 0b110, &mut out);
    assert_eq!(out, [0.0, 0.5, 0.5]);
}
