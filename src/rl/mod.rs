//! What learning agents use (the Python package delegates here): many
//! games stepped together ([`vector`]) and the engines as oracles on
//! batches of positions ([`oracle`]). Pure engine code on the functional
//! core: no actors, no files but the shipped score book.

pub mod oracle;
pub mod vector;
