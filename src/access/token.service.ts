import { createHash, randomBytes } from 'node:crypto';
import { isValidPattern, patternCovers } from '../common/namespace';
import { AccessException, AccessExceptionCode } from './access.exception';
import { AuthContext, Grant } from './auth-context';
import { Capability } from './capability';
import { TokenRecord, TokenRepository } from './token.repository';

const TOKEN_PREFIX = 'mm_';
const MAX_GRANTS = 100;

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function generateToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** The first characters of a token, safe to show in lists and logs. */
export function tokenPrefixOf(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 6);
}

export interface CreateTokenInput {
  name: string;
  principalId?: string | null;
  grants: Grant[];
  expiresAt?: Date | null;
}

/** Issues, revokes and checks API tokens. Tokens are random 256-bit secrets stored as SHA-256. */
export class TokenService {
  constructor(private readonly tokens: TokenRepository) {}

  /** Resolves an `Authorization` header value (with or without `Bearer `) to an AuthContext. */
  async authenticate(header: string | undefined | null): Promise<AuthContext> {
    const token = header?.replace(/^Bearer\s+/i, '').trim();
    if (!token) return AuthContext.anonymous();
    const principal = await this.tokens.findActiveByHash(hashToken(token));
    return principal ? AuthContext.of(principal) : AuthContext.anonymous();
  }

  /**
   * Creates a token. The caller needs `admin` on a pattern covering each requested pattern, and
   * `approve` there as well to hand out `approve`. The secret is returned once and never stored.
   */
  async createToken(auth: AuthContext, input: CreateTokenInput): Promise<{ token: string; record: TokenRecord }> {
    const caller = auth.requirePrincipal();
    this.validateGrants(input.grants);
    for (const g of input.grants) {
      const needs = g.capabilities.includes(Capability.APPROVE) ? [Capability.ADMIN, Capability.APPROVE] : [Capability.ADMIN];
      for (const cap of needs) {
        const covered = caller.grants.some((held) => held.capabilities.includes(cap) && patternCovers(held.namespacePattern, g.namespacePattern));
        if (!covered) {
          throw new AccessException(
            AccessExceptionCode.FORBIDDEN,
            `creating a grant on "${g.namespacePattern}" needs the "${cap}" capability on a pattern covering it`,
          );
        }
      }
    }
    if (input.principalId && !(await this.tokens.principalExists(input.principalId))) {
      throw new AccessException(AccessExceptionCode.INVALID_GRANT, `principal ${input.principalId} does not exist`);
    }
    if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
      throw new AccessException(AccessExceptionCode.INVALID_GRANT, 'expiresAt must be in the future');
    }
    const token = generateToken();
    const record = await this.tokens.insert({
      principalId: input.principalId ?? undefined,
      principalName: input.name,
      name: input.name,
      hash: hashToken(token),
      prefix: tokenPrefixOf(token),
      grants: input.grants,
      expiresAt: input.expiresAt ?? null,
      createdBy: caller.tokenId,
    });
    return { token, record };
  }

  /** Revokes a token: its own holder, or an admin covering all of its grants, may do it. */
  async revokeToken(auth: AuthContext, id: string): Promise<boolean> {
    const caller = auth.requirePrincipal();
    const target = await this.tokens.findById(id);
    if (!target) throw new AccessException(AccessExceptionCode.TOKEN_NOT_FOUND, `no token with id ${id}`);
    const own = target.id === caller.tokenId;
    const coveredByAdmin = target.grants.every((g) =>
      caller.grants.some((held) => held.capabilities.includes(Capability.ADMIN) && patternCovers(held.namespacePattern, g.namespacePattern)),
    );
    if (!own && !coveredByAdmin) {
      throw new AccessException(AccessExceptionCode.FORBIDDEN, `revoking token ${id} needs "admin" on every namespace it grants`);
    }
    return this.tokens.revoke(id);
  }

  /**
   * Makes sure a bootstrap admin token exists. With `configured` (ADMIN_TOKEN) that token is
   * installed; otherwise one is generated only when none exists yet. Returns a newly generated
   * secret so the caller can show it once.
   */
  async ensureBootstrapAdmin(configured: string | undefined): Promise<{ generated?: string }> {
    const grants: Grant[] = [{ namespacePattern: '*', capabilities: [Capability.ADMIN, Capability.APPROVE] }];
    if (configured) {
      if (!(await this.tokens.findActiveByHash(hashToken(configured)))) {
        await this.tokens.insert({
          principalName: 'bootstrap-admin',
          name: 'bootstrap-admin (ADMIN_TOKEN)',
          hash: hashToken(configured),
          prefix: tokenPrefixOf(configured),
          grants,
          isBootstrap: true,
        });
      }
      return {};
    }
    if (await this.tokens.hasBootstrapToken()) return {};
    const token = generateToken();
    await this.tokens.insert({
      principalName: 'bootstrap-admin',
      name: 'bootstrap-admin (generated)',
      hash: hashToken(token),
      prefix: tokenPrefixOf(token),
      grants,
      isBootstrap: true,
    });
    return { generated: token };
  }

  private validateGrants(grants: Grant[]): void {
    if (grants.length === 0 || grants.length > MAX_GRANTS) {
      throw new AccessException(AccessExceptionCode.INVALID_GRANT, `a token needs between 1 and ${MAX_GRANTS} grants`);
    }
    for (const g of grants) {
      if (!isValidPattern(g.namespacePattern)) {
        throw new AccessException(
          AccessExceptionCode.INVALID_GRANT,
          `invalid namespace pattern ${JSON.stringify(g.namespacePattern)}: use a namespace, a prefix ending in "*", or "*"`,
        );
      }
      if (g.capabilities.length === 0) {
        throw new AccessException(AccessExceptionCode.INVALID_GRANT, `grant on "${g.namespacePattern}" lists no capabilities`);
      }
    }
  }
}
