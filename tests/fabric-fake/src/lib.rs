//! `fabric-fake`: a stand-in for Fabric, for end-to-end tests only (never shipped).
//!
//! It plays two parts of Fabric:
//! - `fabric-mcp`, the MCP server over stdio that the hook binary starts as a child
//!   (`fabric-fake --runner <r> --rejoin-only --runtime-session-id <id>`, found through
//!   `FABRIC_MCP`). Its behaviour is read from a state folder named by `FABRIC_FAKE_STATE`,
//!   and it records every start and tool call there ([`state`], [`server`]).
//! - Fabric's folder: `hub.json` and service descriptors ([`files`]).
//!
//! The `fabric-fake` binary is a thin layer over this library. Rust tests in other packages
//! use [`FakeFabric`] and [`fake_binary`] ([`harness`]), and can check the exact answers the
//! stand-in gives ([`answers`]).

pub mod answers;
pub mod files;
pub mod harness;
pub mod server;
pub mod state;

pub use answers::{Mode, REFUSAL_CODES, refusal_answer, status_answer};
pub use files::{remove_hub, write_hub, write_service};
pub use harness::{FakeFabric, fake_binary};
