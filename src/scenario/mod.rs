//! Scenario files: YAML schema, defaults, profiles and validation with
//! file:line:column errors.

pub mod types;
pub use types::*;
