//! The page's TypeScript types, generated from the Rust types it receives and sends
//! (`ts-rs`), into `ui/src/types.ts`: the one place the page's types live. The test fails
//! when that file is not what the Rust types give; `UPDATE_TS_TYPES=1 cargo test -p
//! fabric-companion --lib bindings` writes it. 64-bit integers are `number` (serde_json
//! writes them as JSON numbers, and no count here comes near 2^53).

use ts_rs::{Config, TS};

use crate::commands::{
    Applied, FocusView, HostFile, LogSnapshot, Plan, PlanView, ServicesView, SettingsForm,
    SettingsView, StatusView, TestNotification, TurnChanges,
};
use crate::desktop::{DesktopView, JumpView};
use crate::log_tail::{LogFile, LogLine, LogOutcome, LogUpdate};
use crate::open_request::{OpenRequest, OpenView};
use crate::remote_setup::{
    RemoteHostRemoval, RemoteRemovalPlan, RemoteSetupDone, RemoteSetupPlan, RemoteTakenDown,
    ShownDigest,
};
use crate::remotes::{RemoteLink, RemoteSessionView, RemoteView};
use crate::services::{ServiceState, ServiceView};
use crate::watch::{StateChanged, StateKind};
use companion_hosts::approval::{Approval, HookApproval, HookVerdict, HooksOff, HostApproval};
use companion_hosts::host::Host;
use companion_hosts::install::{Action, Entry, HookStateKind, Operation};
use companion_hosts::registration::Scope;
use companion_sessions::board::BoardState;
use companion_sessions::hub::DownReason;
use companion_sessions::session_state::{SessionState, ToolName, WaitReason};
use companion_sessions::spool::BoardRecord;
use companion_sessions::status::{
    ApprovalSummary, FabricRunState, FabricStatus, HookSummary, HostStatus, HostVersionStatus,
    LogStatus, ServicesStatus, SessionHooks, SessionStatus, Status, TurnStatus,
};

const HEADER: &str = "// Generated from the Rust types by src-tauri/src/bindings.rs (ts-rs): do not edit.\n// Regenerate: UPDATE_TS_TYPES=1 cargo test -p fabric-companion --lib bindings\n";

fn declarations() -> Vec<String> {
    let cfg = Config::new().with_large_int("number");
    macro_rules! decls {
        ($($t:ty),* $(,)?) => { vec![$(<$t as TS>::decl(&cfg)),*] };
    }
    decls![
        // fabric-session-status/1 (companion-sessions)
        Host,
        Scope,
        BoardState,
        BoardRecord,
        DownReason,
        FabricRunState,
        SessionHooks,
        HookStateKind,
        HookSummary,
        HookVerdict,
        HookApproval,
        HooksOff,
        Approval,
        HostApproval,
        ApprovalSummary,
        HostVersionStatus,
        HostStatus,
        FabricStatus,
        ServicesStatus,
        LogStatus,
        TurnStatus,
        SessionState,
        WaitReason,
        ToolName,
        SessionStatus,
        Status,
        // the hook installer's plan (companion-hosts) as the page receives it
        Operation,
        Action,
        Entry,
        Plan,
        PlanView,
        Applied,
        // the dashboard's own
        TurnChanges,
        HostFile,
        RemoteLink,
        RemoteSessionView,
        RemoteView,
        StatusView,
        LogFile,
        LogOutcome,
        LogLine,
        LogSnapshot,
        LogUpdate,
        OpenView,
        OpenRequest,
        JumpView,
        DesktopView,
        ServiceState,
        ServiceView,
        ServicesView,
        SettingsForm,
        SettingsView,
        RemoteSetupPlan,
        RemoteSetupDone,
        RemoteHostRemoval,
        RemoteRemovalPlan,
        ShownDigest,
        RemoteTakenDown,
        TestNotification,
        FocusView,
        StateKind,
        StateChanged,
    ]
}

/// The whole generated file.
pub fn render() -> String {
    let mut out = String::from(HEADER);
    for decl in declarations() {
        out.push('\n');
        out.push_str("export ");
        out.push_str(decl.trim_end());
        out.push('\n');
    }
    // A name the views use for the approval's state word.
    out.push_str("\nexport type ApprovalState = Approval[\"state\"];\n");
    out
}

#[test]
fn bindings_in_ui_src_types_ts_are_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/src/types.ts");
    let wanted = render();
    if std::env::var_os("UPDATE_TS_TYPES").is_some() {
        std::fs::write(path, &wanted).unwrap();
        return;
    }
    let current = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        current == wanted,
        "ui/src/types.ts is not what the Rust types give; run `UPDATE_TS_TYPES=1 cargo test -p fabric-companion --lib bindings` and commit it"
    );
}
