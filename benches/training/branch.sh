#!/bin/sh
# One arm of a branch A/B of the recipe run (models/README.md, "Part three"):
# a copy of one of the run's checkpoints, trained on by
# scenarios/train_connect4.yaml up to ITERATIONS with one change, in
# target/branch/ARM. Run the arms one after the other on the quiet machine.
#
#   benches/training/branch.sh ARM CHECKPOINT_DIR [ITERATIONS]
#
# CHECKPOINT_DIR `none` starts the arm from nothing (a whole run, not a
# branch; its control is the recipe from nothing:
# `c4sim run scenarios/train_connect4.yaml --out DIR --fresh`).
#
# BRANCH_DIR=DIR trains in DIR instead of target/branch/ARM;
# C4SIM=BINARY runs another binary than target/release/c4sim.
#
# ARM: ctrl (no change) | s400 (self-play at 400 simulations) |
#      rpt (mcts.root_prior_temperature: 1.4) | ema (optimizer.ema: 0.75) |
#      seed8 (no change but the seed: how far two controls differ) |
#      rop (self_play.random_opening_plies: 10: games start after 0-10 random moves) |
#      rop8 (rop with seed 8: a second rop arm, beside seed8)
# (s400 … rop8 were run before the recipe had random openings; rop and rop8
# no longer apply to it.) Arms of the recipe with random openings:
#      cont (no change: the recipe run, continued) |
#      rop20 (random_opening_plies: 20: games start after 0-20 random moves) |
#      lr1e4 (the learning rate steps down again, to 0.0001, from iteration 321;
#             in the recipe since, so it no longer applies) |
#      buf300k (replay.capacity: 300000: a window of about 60 iterations, not 20) |
#      gumbel (self_play.gumbel: true: Gumbel root search at the recipe's 100
#              simulations, policy targets from completed Q-values) |
#      rmove (self_play.random_move_share: 0.05: after the opening, one move
#             in 20 is uniformly random) |
#      rmove10 (random_move_share: 0.1: one move in 10) |
#      fpo (self_play.forced_playouts: 2: KataGo's forced playouts with
#           policy target pruning) |
#      qbest (self_play.q_best_child: true: q in the value target from the
#             root's best move, not the root's mean) |
#      s200 (mcts.simulations: 200 and games_per_iteration: 100: better
#            targets for the same self-play simulations an iteration) |
#      lr3e5 (a third learning-rate step: 3·10⁻⁵ from iteration 351) |
#      lr3e5at451 (the same step from iteration 451: for a branch of the
#                  recipe from nothing at its iteration 450) |
#      deep6 (network.blocks: 6: the checkpoint's 4 × 32 network grows to
#             6 × 32 on resume, the new blocks starting as identities) |
#      wide48 (network.channels: 48: it grows to 4 × 48 on resume, the new
#              channels read by nothing old until training connects them) |
#      wide48hot (wide48 with a warm-up: the learning rate back at 3·10⁻⁴
#                 for iterations 411-425, then 10⁻⁴ again; from 410) |
#      gw (replay.growing_window: 20000: KataGo's growing window, batches
#          from the newest 20k positions at first, widening to the whole
#          100k buffer by about iteration 80; from nothing) |
#      wide64 (network.channels: 64: the recipe from nothing with a 4 × 64
#              network, against the 4 × 32 run's curve at equal CPU hours;
#              give it `none`. Its learning rate steps down at the same CPU
#              hours as the 4 × 32 run's (1.44 and 4.40 h; an iteration costs
#              about 145 CPU s against 50), so at 37 and 113, not 111 and 321) |
#      narrow16 (network.channels: 16: the recipe from nothing with a 4 × 16
#              network, the other side of wide64's trade: less capacity,
#              more games per CPU hour. Its learning rate steps down and its
#              curve is measured at about the 4 × 32 run's CPU hours (steps at
#              1.44 and 4.40 h: planned at iterations 280 and 850 from 18.5
#              CPU s an iteration; on 2026-12-04 the machine gave 26, 1.44 h
#              fell at iteration 199, and the run was resumed at 225 with its
#              steps at 225 and 610; eval every 25); give it `none` and TOTAL
#              1300) |
#      reply (network.reply_head: true: KataGo's auxiliary head that
#             predicts the opponent's reply, weight 0.15, added to the
#             checkpoint's network with fresh weights; never used in play)
set -e
arm=$1
ck=$2
total=${3:-208}
case $arm in
  ctrl) from='resume: true'; to='resume: true' ;;
  s400) from='simulations: 100,'; to='simulations: 400,' ;;
  rpt) from='dirichlet_weight: 0.25 }'; to='dirichlet_weight: 0.25, root_prior_temperature: 1.4 }' ;;
  ema) from='weight_decay: 0.03, threads: 0 }'; to='weight_decay: 0.03, ema: 0.75, threads: 0 }' ;;
  seed8) from='^seed: 7$'; to='seed: 8' ;;
  rop) from='q_weight: 0.5 }'; to='q_weight: 0.5, random_opening_plies: 10 }' ;;
  rop8) from='q_weight: 0.5 }'; to='q_weight: 0.5, random_opening_plies: 10 }'; also='s/^seed: 7$/seed: 8/' ;;
  cont) from='resume: true'; to='resume: true' ;;
  rop20) from='random_opening_plies: 10 }'; to='random_opening_plies: 20 }' ;;
  lr1e4) from='learning_rate: 0.0003 }]'; to='learning_rate: 0.0003 }, { from: 321, learning_rate: 0.0001 }]' ;;
  buf300k) from='capacity: 100000,'; to='capacity: 300000,' ;;
  gumbel) from='q_weight: 0.5,'; to='q_weight: 0.5, gumbel: true,' ;;
  rmove) from='random_opening_plies: 10 }'; to='random_opening_plies: 10, random_move_share: 0.05 }' ;;
  rmove10) from='random_opening_plies: 10 }'; to='random_opening_plies: 10, random_move_share: 0.1 }' ;;
  fpo) from='random_opening_plies: 10 }'; to='random_opening_plies: 10, forced_playouts: 2 }' ;;
  qbest) from='q_weight: 0.5,'; to='q_weight: 0.5, q_best_child: true,' ;;
  s200) from='simulations: 100,'; to='simulations: 200,'; also='s/games_per_iteration: 200,/games_per_iteration: 100,/' ;;
  lr3e5) from='learning_rate: 0.0001 }]'; to='learning_rate: 0.0001 }, { from: 351, learning_rate: 0.00003 }]' ;;
  lr3e5at451) from='learning_rate: 0.0001 }]'; to='learning_rate: 0.0001 }, { from: 451, learning_rate: 0.00003 }]' ;;
  deep6) from='network: { blocks: 4, channels: 32 }'; to='network: { blocks: 6, channels: 32 }' ;;
  wide48) from='network: { blocks: 4, channels: 32 }'; to='network: { blocks: 4, channels: 48 }' ;;
  wide48hot) from='learning_rate: 0.0001 }]'; to='learning_rate: 0.0001 }, { from: 411, learning_rate: 0.0003 }, { from: 426, learning_rate: 0.0001 }]'
             also='s/network: { blocks: 4, channels: 32 }/network: { blocks: 4, channels: 48 }/' ;;
  gw) from='average_duplicates: true }'; to='average_duplicates: true, growing_window: 20000 }' ;;
  wide64) from='network: { blocks: 4, channels: 32 }'; to='network: { blocks: 4, channels: 64 }'
          also='s/from: 111, learning_rate: 0.0003 }, { from: 321,/from: 37, learning_rate: 0.0003 }, { from: 113,/' ;;
  narrow16) from='network: { blocks: 4, channels: 32 }'; to='network: { blocks: 4, channels: 16 }'
          also='s/from: 111, learning_rate: 0.0003 }, { from: 321,/from: 225, learning_rate: 0.0003 }, { from: 610,/;s/eval: { every: 10,/eval: { every: 25,/' ;;
  reply) from='network: { blocks: 4, channels: 32 }'; to='network: { blocks: 4, channels: 32, reply_head: true }' ;;
  *) echo "unknown arm '$arm' (ctrl, s400, rpt, ema, seed8, rop, rop8, cont, rop20, lr1e4, buf300k, gumbel, rmove, rmove10, fpo, qbest, s200, lr3e5, lr3e5at451, deep6, wide48, wide48hot, gw, wide64, narrow16, reply)" >&2; exit 2 ;;
esac
dir=${BRANCH_DIR:-target/branch/$arm}
mkdir -p "$dir/checkpoints"
if [ "$ck" != none ]; then
  [ -f "$ck/meta.json" ] || { echo "no checkpoint in '$ck'" >&2; exit 2; }
  # The run resumes from checkpoints/iter-N only: another name would start it from nothing.
  case $(basename "$ck") in iter-[0-9]*) ;; *) echo "'$ck' is not named iter-N (copy it to one that is)" >&2; exit 2 ;; esac
  [ -d "$dir/checkpoints/$(basename "$ck")" ] || cp -r "$ck" "$dir/checkpoints/"
fi
sed -e "s#out: models/train_connect4#out: $dir#" -e "s/iterations: 500/iterations: $total/" \
    -e "s/$from/$to/" -e "${also:-s/^//}" scenarios/train_connect4.yaml > "$dir.yaml"
grep -qF "$to" "$dir.yaml" && grep -qF "out: $dir" "$dir.yaml" || { echo "the change did not apply" >&2; exit 1; }
exec ${C4SIM:-target/release/c4sim} run "$dir.yaml"
