/**
 * The fake Discord gateway (ws): HELLO, IDENTIFY (token and intents checked and recorded), READY,
 * GUILD_CREATE, heartbeat ACKs, RESUME; then the test dispatches events to every identified shard.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export interface GatewayState {
  token: string;
  /** Intents the fake requires; IDENTIFY without all of them is closed with 4014 (disallowed intents). */
  allowedIntents: number;
  heartbeatIntervalMs: number;
  ready: () => Record<string, unknown>;
  /** Every guild of the bot; each session gets the ones on its shard (READY, then GUILD_CREATE). */
  guildCreates: () => Record<string, unknown>[];
}

export interface Identify {
  intents: number;
  shard: [number, number] | undefined;
}

interface Session {
  ws: WebSocket;
  seq: number;
  sessionId: string;
  shard: [number, number];
}

/** Which shard Discord sends a guild's events to; DMs go to shard 0. */
export function shardOf(guildId: string | undefined, count: number): number {
  return guildId ? Number((BigInt(guildId) >> 22n) % BigInt(count)) : 0;
}

export interface FakeGateway {
  url: string;
  identifies: Identify[];
  heartbeats: number;
  /** Send a dispatch (op 0) to every identified session; resolves once written. */
  dispatch(t: string, d: unknown): Promise<void>;
  /** Resolves when at least `n` sessions have identified. */
  waitForIdentify(n?: number): Promise<void>;
  /** Drop every connection with a resumable close code (the client reconnects and RESUMEs). */
  dropConnections(): void;
  resumes: number;
  close(): Promise<void>;
}

export async function createGateway(state: GatewayState): Promise<FakeGateway> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await once(wss, "listening");
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  const sessions: Session[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];

  const gw: FakeGateway = {
    url,
    identifies: [],
    heartbeats: 0,
    resumes: 0,
    async dispatch(t, d) {
      const guildId = (d as { guild_id?: string } | null)?.guild_id;
      const targets = sessions.filter(
        (s) => s.ws.readyState === 1 && s.shard[0] === shardOf(guildId, s.shard[1]),
      );
      await Promise.all(targets.map((s) => send(s, t, d)));
    },
    waitForIdentify(n = 1) {
      if (gw.identifies.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    dropConnections() {
      for (const s of sessions) s.ws.close(4000, "fake: reconnect");
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };

  const send = (s: Session, t: string, d: unknown): Promise<void> =>
    new Promise((resolve, reject) => {
      s.seq++;
      s.ws.send(JSON.stringify({ op: 0, t, s: s.seq, d }), (err) => (err ? reject(err) : resolve()));
    });

  wss.on("connection", (ws, req) => {
    const q = new URL(req.url ?? "/", "ws://fake").searchParams;
    if (q.get("encoding") !== "json" || q.has("compress")) {
      ws.close(4002, "fake supports encoding=json without compression only");
      return;
    }
    const session: Session = { ws, seq: 0, sessionId: `session-${sessions.length + 1}`, shard: [0, 1] };
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: state.heartbeatIntervalMs } }));
    ws.on("message", (raw) => {
      const frame = JSON.parse(String(raw)) as { op: number; d: Record<string, unknown> | null };
      if (frame.op === 1) {
        gw.heartbeats++;
        ws.send(JSON.stringify({ op: 11 }));
      } else if (frame.op === 2) {
        const d = frame.d ?? {};
        if (d.token !== state.token) {
          ws.close(4004, "Authentication failed.");
          return;
        }
        const intents = Number(d.intents);
        gw.identifies.push({ intents, shard: d.shard as [number, number] | undefined });
        if ((intents & ~state.allowedIntents) !== 0) {
          ws.close(4014, "Disallowed intent(s).");
          return;
        }
        session.shard = (d.shard as [number, number] | undefined) ?? [0, 1];
        sessions.push(session);
        const mine = state
          .guildCreates()
          .filter((g) => shardOf(String(g.id), session.shard[1]) === session.shard[0]);
        void send(session, "READY", {
          ...state.ready(),
          guilds: mine.map((g) => ({ id: g.id, unavailable: true })),
          shard: session.shard,
          session_id: session.sessionId,
          resume_gateway_url: url,
        })
          .then(async () => {
            for (const g of mine) await send(session, "GUILD_CREATE", g);
          })
          .then(() => {
            for (const w of [...waiters]) {
              if (gw.identifies.length >= w.n) {
                waiters.splice(waiters.indexOf(w), 1);
                w.resolve();
              }
            }
          });
      } else if (frame.op === 6) {
        gw.resumes++;
        session.sessionId = String(frame.d?.session_id);
        session.seq = Number(frame.d?.seq ?? 0);
        sessions.push(session);
        void send(session, "RESUMED", null);
      }
    });
    ws.on("close", () => {
      const i = sessions.indexOf(session);
      if (i >= 0) sessions.splice(i, 1);
    });
  });

  return gw;
}
