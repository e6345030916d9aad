import { Principal } from './auth-context';

/** The channel `access.revoke_token` NOTIFYs with the revoked token's id (migration 1764400000900). */
export const TOKEN_REVOKED_CHANNEL = 'medallion_token_revoked';

export type TokenEnd = 'revoked' | 'expired';

/** The part of `PgListener` this needs. */
export interface NotificationSource {
  on(channel: string, handler: (payload: string) => void): Promise<() => void>;
}

// setTimeout holds at most 2^31-1 ms (24.8 days); a later expiry re-arms on the way.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Ends long-lived connections (graphql-ws sockets) the moment their token stops being valid:
 * revocation arrives as a Postgres NOTIFY from `access.revoke_token`, in every process that
 * listens (push, not polling), and expiry as a timer set to the token's `expiresAt`. Re-checking
 * the token every AUTH_RECHECK_MS stays as the backstop for a NOTIFY lost while the listener
 * reconnects.
 */
export class TokenRevocations {
  private readonly watchers = new Map<string, Set<(end: TokenEnd) => void>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Starts listening for revocations on `source`. */
  async listen(source: NotificationSource): Promise<void> {
    await source.on(TOKEN_REVOKED_CHANNEL, (tokenId) => this.revoked(tokenId));
  }

  /** Tells every watcher of `tokenId` that it was revoked (also what the NOTIFY handler calls). */
  revoked(tokenId: string): void {
    const set = this.watchers.get(tokenId);
    if (!set) return;
    this.watchers.delete(tokenId);
    for (const end of set) end('revoked');
  }

  /**
   * Calls `onEnd` once, when `principal`'s token is revoked or reaches its expiry (at once when it
   * already has). Returns the disposer: call it when the connection closes for any other reason.
   */
  watch(principal: Pick<Principal, 'tokenId' | 'expiresAt'>, onEnd: (end: TokenEnd) => void): () => void {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (end: TokenEnd): void => {
      if (done) return;
      done = true;
      dispose();
      onEnd(end);
    };
    const dispose = (): void => {
      done = true;
      if (timer) clearTimeout(timer);
      const set = this.watchers.get(principal.tokenId);
      set?.delete(finish);
      if (set?.size === 0) this.watchers.delete(principal.tokenId);
    };
    let set = this.watchers.get(principal.tokenId);
    if (!set) {
      set = new Set();
      this.watchers.set(principal.tokenId, set);
    }
    set.add(finish);
    const expiresAt = principal.expiresAt?.getTime();
    if (expiresAt !== undefined) {
      const arm = (): void => {
        const left = expiresAt - this.now();
        if (left <= 0) return finish('expired');
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
        timer.unref();
      };
      arm();
    }
    return dispose;
  }

  /** Tokens with at least one open watcher (for tests and metrics). */
  get watchedTokens(): number {
    return this.watchers.size;
  }
}
