fn main() {
    let depth: u32 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(8);
    let base: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(0);
    let pos = c4sim::search::bench::midgame_positions(20, 2024);
    let f = c4sim::search::bench::minimax_bench(depth, &pos, base, &mut std::io::stdout()).unwrap();
    println!("{f:?}");
}
