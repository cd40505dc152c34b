// Facts the mocked IPC serves, for the unit and browser tests.

import type {
  LogLine,
  PlanView,
  RemoteRemovalPlan,
  RemoteSetupPlan,
  ServicesView,
  SettingsView,
  StatusView,
} from '../src/types';

export function statusFixture(): StatusView {
  return {
    status: {
      schema: 'fabric-session-status/1',
      fabric: {
        state: 'running',
        origin: 'http://127.0.0.1:47070',
        pid: 4242,
        startedAt: '2026-10-01T09:00:00Z',
        features: ['session-hooks/1'],
        hubJson: '/home/ada/.local/share/passioncode-fabric/hub.json',
      },
      sessionHooks: 'active',
      hosts: [
        {
          host: 'claude',
          name: 'Claude Code',
          fabricRegistered: true,
          scopes: ['user'],
          hooks: {
            state: 'installed',
            commandPath: '/home/ada/.local/share/fabric-companion/bin/fabric-session',
            description: 'installed',
          },
          approval: { state: 'not-needed', hooks: [] },
          hostVersion: { installed: '2.1.328', tested: '2.1.328', olderThanTested: false },
        },
        {
          host: 'codex',
          name: 'Codex',
          fabricRegistered: true,
          scopes: ['user'],
          hooks: { state: 'not-installed', description: 'not installed' },
          hostVersion: { installed: '0.160.0', tested: '0.169.0', olderThanTested: true },
        },
        {
          host: 'kimi',
          name: 'Kimi Code',
          fabricRegistered: false,
          scopes: [],
          hooks: {
            state: 'stale',
            commandPath: '/gone/fabric-session',
            description: 'installed, but /gone/fabric-session does not exist',
          },
          approval: { state: 'not-needed', hooks: [] },
          hostVersion: { installed: null, tested: '2.1.0', olderThanTested: false },
        },
      ],
      services: { dir: '/home/ada/.local/share/passioncode-fabric/services', descriptors: 2, local: 2 },
      log: {
        path: '/home/ada/.cache/fabric-companion/hooks.log',
        rotated: '/home/ada/.cache/fabric-companion/hooks.log.1',
      },
      sessions: [
        {
          id: 'sess-analytics-1',
          host: 'codex',
          project: 'proj-analytics',
          startedAt: '2026-10-01T09:05:00Z',
          hostPid: 900,
          inTurn: false,
          state: 'finished',
          subagent: false,
          interrupted: false,
          stateSince: '2026-10-01T09:30:00.120Z',
          turnStartedAt: '2026-10-01T09:21:00.000Z',
          lastTurn: { seq: 3, at: '2026-10-01T09:30:00Z' },
          board: { unread: 2, state: 'ready', observedAt: '2026-10-01T09:30:02Z' },
        },
        {
          id: 'sess-web-2',
          host: 'claude',
          project: 'web-shop',
          startedAt: '2026-10-01T10:00:00Z',
          hostPid: 901,
          inTurn: true,
          state: 'needs-you',
          subagent: false,
          interrupted: false,
          stateSince: '2026-10-01T10:04:00.000Z',
          reason: 'permission',
          tool: 'Bash',
          turnStartedAt: '2026-10-01T10:03:51.000Z',
          board: null,
        },
      ],
    },
    turnChanges: { 'sess-analytics-1': { filesChanged: 4, linesAdded: 120, linesRemoved: 7 } },
    hookFiles: [
      { host: 'claude', file: '/home/ada/.claude/settings.json' },
      { host: 'codex', file: '/home/ada/.codex/hooks.json' },
      { host: 'kimi', file: '/home/ada/.kimi-code/config.toml' },
    ],
    trayRunning: true,
    remotes: [
      {
        remote: 'me@build-box',
        label: 'build-box',
        link: { state: 'up', since: '2026-10-01T08:00:00Z' },
        sessions: [
          {
            id: 'remote:me@build-box/sess-remote-1',
            host: 'claude',
            project: 'api',
            state: 'needs-you',
            stateSince: '2026-10-01T09:40:00.000Z',
            reason: 'permission',
            unread: 2,
            tmuxPane: '%3',
          },
        ],
      },
      {
        remote: 'gpu-box',
        label: 'gpu-box',
        link: {
          state: 'down',
          since: '2026-10-01T09:00:00Z',
          why: 'unreachable (ssh: connect to host gpu-box port 22: Connection refused)',
        },
        sessions: [],
      },
    ],
  };
}

export function planFixture(): PlanView {
  return {
    plan: {
      host: 'codex',
      operation: 'install',
      file: '/home/ada/.codex/hooks.json',
      exists: true,
      sha256: 'aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff00112233',
      digest: 'aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff00112233',
      action: { kind: 'install' },
      add: [
        {
          event: 'SessionStart',
          matcher: 'startup|resume',
          command: '/opt/fabric-session hook codex session-start',
          timeout: 5,
        },
      ],
      remove: [],
      addText: '{"SessionStart": [{"matcher": "startup|resume", "hooks": [...]}]}',
      removeText: '',
      program: '/opt/fabric-session',
      applyCommand: 'fabric-session install codex --apply --expect-sha256 aa11…',
      warnings: [],
      notes: ['Codex runs a new or changed hook only after you approve it: run /hooks in Codex once this is written.'],
    },
    diff: ' {\n-  "hooks": {}\n+  "hooks": {\n+    "SessionStart": []\n+  }\n }',
    changes: true,
  };
}

export function logLine(i: number, over: Partial<LogLine> = {}): LogLine {
  const base: LogLine = {
    file: 'hooks.log',
    time: `2026-10-01T09:${String(i % 60).padStart(2, '0')}:00Z`,
    event: i % 3 === 0 ? 'stop' : 'session-start',
    host: 'codex',
    session: i % 2 === 0 ? 'sess-analytics-1' : 'sess-web-2',
    outcome: i % 5 === 0 ? 'refused' : 'ok',
    code: i % 5 === 0 ? 'fabric-down' : null,
    detail: `n=${i}`,
    raw: '',
  };
  const line = { ...base, ...over };
  line.raw = `${line.time} ${line.event} ${line.host} ${line.session ?? '-'} ${line.outcome === 'refused' ? `refused ${line.code}` : line.outcome} ${line.detail}`;
  return line;
}

export function servicesFixture(): ServicesView {
  const base = { placement: 'local', manager: 'none', reported: null, version: null, degraded: [] as string[] };
  return {
    dir: '/home/ada/.local/share/passioncode-fabric/services',
    services: [
      {
        ...base,
        file: 'example-agent.default.json',
        id: 'example-agent',
        instance: 'default',
        name: 'Example Agent',
        origin: 'http://127.0.0.1:47195',
        state: 'ready',
        detail: 'Ready.',
        reported: 'ready',
        version: '0.2.0',
      },
      {
        ...base,
        file: 'mail-bot.default.json',
        id: 'mail-bot',
        instance: 'default',
        name: 'Mail Bot',
        origin: 'http://127.0.0.1:47196',
        state: 'degraded',
        detail: 'Running, with problems.',
        reported: 'degraded',
        degraded: ['llm: No model key'],
      },
      {
        ...base,
        file: 'gone.default.json',
        id: 'gone',
        instance: 'default',
        name: 'Gone Service',
        origin: 'http://127.0.0.1:47197',
        state: 'down',
        detail: 'No answer at http://127.0.0.1:47197 (connection refused).',
      },
      {
        ...base,
        file: 'broken.json',
        id: null,
        instance: null,
        name: null,
        origin: null,
        state: 'invalid',
        detail: 'The descriptor does not follow fabric-service/0.1: "id" is a required property',
      },
    ],
  };
}

export function settingsFixture(): SettingsView {
  return {
    path: '/home/ada/.config/fabric-companion/settings.json',
    form: {
      watchIntervalSecs: 60,
      notifications: true,
      quietStart: '22:00',
      quietEnd: '07:30',
      launchAtLogin: false,
      mutedProjects: ['proj-noisy'],
      needsYouGraceSecs: 5,
      longTurnMinutes: null,
      remotes: ['me@build-box', 'gpu-box'],
    },
    notificationsPausedUntil: null,
    minIntervalSecs: 10,
    maxIntervalSecs: 86400,
    maxGraceSecs: 600,
    autostartFile: '/home/ada/.config/autostart/fabric-tray.desktop',
    autostartPresent: false,
    rules: [
      'Quiet hours: no notifications from From until Until, local time, across midnight too; the icon still counts.',
      'Muted projects (folder names): their sessions never notify; the icon still counts them.',
    ],
    dismissedHookOffers: [],
  };
}

/** What "Set up…" answers for build-box: our program copied, Claude Code's plan there. */
export function remoteSetupFixture(): RemoteSetupPlan {
  const digest = 'sha256:5e7a0c1d2b3f4e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c';
  return {
    remote: 'build-box',
    label: 'build-box',
    host: 'claude',
    machine: 'x86_64',
    programSha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    changes: true,
    planText: [
      'Claude Code on build-box: /home/ada/.claude/settings.json',
      '  Would add:',
      '    hooks.SessionStart: /home/ada/.local/share/fabric-companion/bin/fabric-session hook session-start',
      '    hooks.UserPromptSubmit: /home/ada/.local/share/fabric-companion/bin/fabric-session hook prompt',
      '    hooks.Stop: /home/ada/.local/share/fabric-companion/bin/fabric-session hook stop',
      `  Plan digest: ${digest}`,
      '',
    ].join('\n'),
    digest,
  };
}

/** What "Take down…" answers for build-box: Claude Code's and Codex's hooks of ours there. */
export function remoteRemovalFixture(): RemoteRemovalPlan {
  const program = '/home/ada/.local/share/fabric-companion/bin/fabric-session';
  const claude = 'sha256:1c1c2d2d3e3e4f4f5a5a6b6b7c7c8d8d9e9e0f0f1a1a2b2b3c3c4d4d5e5e6f6f';
  const codex = 'sha256:c0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0de';
  return {
    remote: 'build-box',
    label: 'build-box',
    hosts: [
      {
        host: 'claude',
        planText: `Claude Code on build-box: /home/ada/.claude/settings.json\n  Would take out:\n    hooks.SessionStart: ${program} hook session-start\n  Plan digest: ${claude}\n`,
        digest: claude,
      },
      {
        host: 'codex',
        planText: `Codex on build-box: /home/ada/.codex/hooks.json\n  Would take out:\n    hooks.SessionStart: ${program} hook session-start\n  Plan digest: ${codex}\n`,
        digest: codex,
      },
    ],
  };
}
