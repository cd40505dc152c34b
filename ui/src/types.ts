// Generated from the Rust types by src-tauri/src/bindings.rs (ts-rs): do not edit.
// Regenerate: UPDATE_TS_TYPES=1 cargo test -p fabric-companion --lib bindings

export type HostId = "claude" | "codex" | "kimi";

export type Scope = "user" | "local" | "project";

export type BoardState = "ready" | "degraded" | "unavailable";

export type BoardRecord = { unread: number, state: BoardState, 
/**
 * When the reading was taken (RFC 3339; to the millisecond since readings are ordered).
 */
observedAt: string, };

export type DownReason = "no hub.json" | "hub.json unreadable" | "its process is gone";

export type FabricRunState = "running" | "down";

export type SessionHooks = "active" | "inert";

export type HookStateKind = "installed" | "not-installed" | "stale" | "incomplete" | "unreadable";

export type HookSummary = { 
/**
 * `installed`, `not-installed`, `stale` (installed, but the command's program does not
 * exist), `incomplete` (some of our events missing) or `unreadable` (the config does not
 * parse).
 */
state: HookStateKind, 
/**
 * The program our installed command runs.
 */
commandPath?: string, 
/**
 * Words for a person.
 */
description: string, };

export type HookVerdict = "approved" | "waiting" | "changed" | "turned-off";

export type HookApproval = { 
/**
 * The host's event name (`SessionStart`, …).
 */
event: string, 
/**
 * The host's key for the hook's record (Codex: `<hooks.json>:<event>:<group>:<handler>`).
 */
key: string, 
/**
 * The host's hash of the hook's definition (Codex: `sha256:<hex>`).
 */
hash: string, verdict: HookVerdict, 
/**
 * Not approved here, but approved as it is at another place in the file: an entry was
 * added before ours, and the host ties an approval to the place.
 */
approvedElsewhere: boolean, };

export type HooksOff = "feature-off";

export type Approval = { "state": "not-needed" } | { "state": "approved" } | { "state": "waiting", events: Array<string>, approvedElsewhere: boolean, } | { "state": "changed", events: Array<string>, approvedElsewhere: boolean, } | { "state": "turned-off", events: Array<string>, } | { "state": "hooks-off", cause: HooksOff, } | { "state": "unknown", reason: string, };

export type HostApproval = { 
/**
 * Each hook of ours, as the host keys it (empty where approval is not needed).
 */
hooks: Array<HookApproval>, } & ({ "state": "not-needed" } | { "state": "approved" } | { "state": "waiting", events: Array<string>, approvedElsewhere: boolean, } | { "state": "changed", events: Array<string>, approvedElsewhere: boolean, } | { "state": "turned-off", events: Array<string>, } | { "state": "hooks-off", cause: HooksOff, } | { "state": "unknown", reason: string, });

export type ApprovalSummary = { 
/**
 * What is left to do, in words; absent when the host needs no approval.
 */
description?: string, 
/**
 * Each hook of ours, as the host keys it (empty where approval is not needed).
 */
hooks: Array<HookApproval>, } & ({ "state": "not-needed" } | { "state": "approved" } | { "state": "waiting", events: Array<string>, approvedElsewhere: boolean, } | { "state": "changed", events: Array<string>, approvedElsewhere: boolean, } | { "state": "turned-off", events: Array<string>, } | { "state": "hooks-off", cause: HooksOff, } | { "state": "unknown", reason: string, });

export type HostVersionStatus = { 
/**
 * `null` when no file beside the host's program says it (or there is no program).
 */
installed: string | null, 
/**
 * The version the hooks were tested with.
 */
tested: string, 
/**
 * The installed version is older than the tested one.
 */
olderThanTested: boolean, 
/**
 * The host's program the version was read beside.
 */
program?: string, };

export type HostStatus = { host: HostId, name: string, fabricRegistered: boolean, scopes: Array<Scope>, hooks: HookSummary, 
/**
 * Whether the host runs our hooks, read from its own record of the person's approval;
 * absent when none of ours is in its config.
 */
approval?: ApprovalSummary, 
/**
 * The host's version, when its files say it, against the one our hooks were tested with.
 */
hostVersion: HostVersionStatus, };

export type FabricStatus = { state: FabricRunState, downReason?: DownReason, origin?: string, pid?: number, startedAt?: string, features: Array<string>, hubJson: string, };

export type ServicesStatus = { dir: string, descriptors: number, local: number, };

export type LogStatus = { path: string, rotated: string, };

export type TurnStatus = { seq: number, at: string, 
/**
 * What the turn left changed against HEAD (untracked files included); absent until the
 * worker measured this turn, `null` outside a git repository.
 */
filesChanged?: number | null, linesAdded?: number | null, linesRemoved?: number | null, };

export type SessionState = "idle" | "working" | "needs-you" | "finished" | "failed";

export type WaitReason = "permission" | "question";

export type ToolName = string;

export type SessionStatus = { id: string, host: HostId, project: string, startedAt: string, hostPid: number, 
/**
 * The tmux pane the session runs in (`%N`), when the terminal ids its session-start hook
 * recorded have one (checked again when read back: `%` and digits only).
 */
tmuxPane?: string, 
/**
 * A prompt started a turn after the last Stop.
 */
inTurn: boolean, 
/**
 * What the session is doing, from its hooks ([`crate::session_state`]): `idle`,
 * `working`, `needs-you`, `finished` or `failed`.
 */
state: SessionState, 
/**
 * Since when (RFC 3339, to the millisecond); absent before any hook recorded a state.
 */
stateSince?: string, 
/**
 * Needs you: why, in a word (`permission`, `question`).
 */
reason?: WaitReason, 
/**
 * Needs you: the tool waiting, when the host names it.
 */
tool?: ToolName, 
/**
 * Needs you: a subagent asked.
 */
subagent: boolean, 
/**
 * Finished: the turn was interrupted (or its prompt refused), not ended by the agent.
 */
interrupted: boolean, 
/**
 * When the current (or last) turn started.
 */
turnStartedAt?: string, lastTurn?: TurnStatus, 
/**
 * The last board reading (`null` when the board never gave a count).
 */
board: BoardRecord | null, };

export type Status = { schema: "fabric-session-status/1", fabric: FabricStatus, sessionHooks: SessionHooks, hosts: Array<HostStatus>, services: ServicesStatus, log: LogStatus, sessions: Array<SessionStatus>, };

export type Operation = "install" | "remove";

export type Action = { "kind": "install" } | { "kind": "remove" } | { "kind": "nothing-to-do", reason: string, };

export type HookEntry = { 
/**
 * The host's event name (`SessionStart`, `Stop`, `UserPromptSubmit`, `SessionEnd`).
 */
event: string, 
/**
 * The matcher; `None` for a group without one (or, for entries found in a file, a
 * group that also holds hooks not ours, whose matcher we do not report).
 */
matcher: string | null, 
/**
 * The command the host runs.
 */
command: string, 
/**
 * Seconds.
 */
timeout: number | null, };

export type Plan = { host: HostId, operation: Operation, file: string, exists: boolean, sha256: string | null, digest: string, action: Action, add: Array<HookEntry>, remove: Array<HookEntry>, addText: string, removeText: string, program: string | null, applyCommand: string | null, warnings: Array<string>, notes: Array<string>, };

export type PlanView = { plan: Plan, diff: string, changes: boolean, };

export type Applied = { file: string, backup: string | null, changed: boolean, sha256: string, plan: Plan, };

export type TurnChanges = { filesChanged: number | null, linesAdded: number | null, linesRemoved: number | null, };

export type HostFile = { host: HostId, file: string, };

export type RemoteLink = { "state": "connecting", since: string, } | { "state": "up", since: string, } | { "state": "down", since: string, why: string, };

export type RemoteSessionView = { 
/**
 * The id "Go to" takes (`remote:<remote>/<id>`).
 */
id: string, host: HostId, project: string, state: SessionState, stateSince?: string, reason?: WaitReason, 
/**
 * The board's last count (`null`: never counted).
 */
unread: number | null, 
/**
 * Its tmux pane there, when it runs in tmux.
 */
tmuxPane?: string, };

export type RemoteView = { 
/**
 * As written in the settings.
 */
remote: string, 
/**
 * Its name as a person reads it.
 */
label: string, link: RemoteLink, 
/**
 * Its sessions (none while the link is down: nothing of them is known then).
 */
sessions: Array<RemoteSessionView>, };

export type StatusView = { status: Status, 
/**
 * Session id → the changes its last turn left (only sessions that had a turn).
 */
turnChanges: { [key in string]: TurnChanges }, 
/**
 * Each host's hook config file.
 */
hookFiles: Array<HostFile>, trayRunning: boolean, 
/**
 * The remotes the tray follows, as it last saved them (none while it is not running).
 */
remotes: Array<RemoteView>, };

export type LogFile = "hooks.log" | "hooks.log.1";

export type LogOutcome = "ok" | "refused" | "unknown" | "unparsed";

export type LogLine = { file: LogFile, time: string, event: string, host: string, session: string | null, outcome: LogOutcome, 
/**
 * The refusal code, for `refused`.
 */
code: string | null, detail: string, raw: string, };

export type LogSnapshot = { path: string, rotated: string, lines: Array<LogLine>, };

export type LogUpdate = { 
/**
 * The page must drop what it has and take `lines` as the whole log.
 */
reset: boolean, lines: Array<LogLine>, };

export type OpenView = "hooks";

export type OpenRequest = { view: OpenView, host: HostId | null, };

export type JumpView = { "state": "works" } | { "state": "gnomeExtensionOff", why: string, command: string, } | { "state": "gnomeExtensionMissing", why: string, } | { "state": "gnomeExtensionOutOfDate", why: string, } | { "state": "gnomeExtensionFailed", why: string, error: string, } | { "state": "notPossible", why: string, };

export type DesktopView = { 
/**
 * GNOME without a tray host: what to turn on, and that notifications and the jump work
 * without it.
 */
trayHelp: string | null, jump: JumpView, };

export type ServiceState = "ready" | "degraded" | "down" | "invalid" | "foreign" | "not-probed";

export type ServiceView = { 
/**
 * The descriptor's file name.
 */
file: string, id: string | null, instance: string | null, name: string | null, origin: string | null, placement: string, manager: string | null, state: ServiceState, 
/**
 * Why, in words.
 */
detail: string, 
/**
 * The service's own status word (`starting`, `ready`, `degraded`, `stopping`).
 */
reported: string | null, version: string | null, degraded: Array<string>, };

export type ServicesView = { dir: string, services: Array<ServiceView>, };

export type SettingsForm = { watchIntervalSecs: number, notifications: boolean, 
/**
 * `HH:MM`, both or neither.
 */
quietStart: string | null, quietEnd: string | null, launchAtLogin: boolean, 
/**
 * Projects (folder names) whose sessions never notify.
 */
mutedProjects: Array<string>, 
/**
 * Seconds a session must have needed you before it is notified.
 */
needsYouGraceSecs: number, 
/**
 * A turn longer than this many minutes says so when it finishes; `null`: never.
 */
longTurnMinutes: number | null, 
/**
 * Other machines the tray follows, as written (an `ssh` destination or `Host` alias,
 * `docker:<container>`, `podman:<container>`, `wsl:<distribution>`).
 */
remotes: Array<string>, };

export type SettingsView = { path: string, form: SettingsForm, notificationsPausedUntil: string | null, minIntervalSecs: number, maxIntervalSecs: number, 
/**
 * The longest grace that can be set, in seconds.
 */
maxGraceSecs: number, autostartFile: string, autostartPresent: boolean, 
/**
 * How notifications behave, one line per rule.
 */
rules: Array<string>, 
/**
 * Hosts whose "Set up hooks for …" offer the person turned off ("Don't offer again"):
 * each can be offered again (`offer_hooks_again`).
 */
dismissedHookOffers: Array<HostId>, };

export type RemoteSetupPlan = { 
/**
 * The remote as the settings will hold it.
 */
remote: string, 
/**
 * Its name as a person reads it.
 */
label: string, host: HostId, 
/**
 * Its architecture (`uname -m`): `x86_64` or `aarch64`.
 */
machine: string, 
/**
 * The sha256 of our program as copied there (compared at both ends).
 */
programSha256: string, 
/**
 * Whether applying the plan would change the host's config there.
 */
changes: boolean, 
/**
 * The plan as the remote's dry run gives it (the same text as `remote add` prints).
 */
planText: string, 
/**
 * What applying exactly this plan takes.
 */
digest: string, };

export type RemoteSetupDone = { remote: string, label: string, host: HostId, 
/**
 * Whether the remote was added to the remotes the tray follows now (not already there).
 */
followed: boolean, 
/**
 * The settings as they are now (their `remotes` holding it).
 */
settings: SettingsView, };

export type RemoteHostRemoval = { host: HostId, 
/**
 * The plan as the remote's dry run gives it (the same text as `remote remove` prints).
 */
planText: string, digest: string, };

export type RemoteRemovalPlan = { remote: string, label: string, hosts: Array<RemoteHostRemoval>, };

export type ShownDigest = { host: HostId, digest: string, };

export type RemoteTakenDown = { remote: string, label: string, 
/**
 * Whether the remote was taken out of the remotes the tray follows (it was there).
 */
unfollowed: boolean, settings: SettingsView, };

export type TestNotification = { requested: boolean, trayRunning: boolean, };

export type FocusView = { "outcome": "raised", what: string, } | { "outcome": "gone" } | { "outcome": "unknown" } | { "outcome": "notAllowed", why: string, place: string, };

export type StateKind = "status" | "services" | "settings";

export type StateChanged = { kinds: Array<StateKind>, };

export type ApprovalState = Approval["state"];
