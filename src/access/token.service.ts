import { createHash, randomBytes } from 'node:crypto';
import { isUuid } from '../common/ids';
import { isValidPattern, patternCovers } from '../common/namespace';
import { AccessException, AccessExceptionCode } from './access.exception';
import { AuthContext, Grant, Principal } from './auth-context';
import { Capability } from './capability';
import { TokenRecord, TokenRepository } from './token.repository';

const TOKEN_PREFIX = 'mm_';
const MAX_GRANTS = 100;
const MAX_NAME = 200;

/** A token's name: shown in lists and in every FORBIDDEN message, so short and plain. */
export function checkTokenName(name: string): string {
  const trimmed = name.trim();
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (trimmed.length < 1 || trimmed.length > MAX_NAME || /[\u0000-\u001f\u007f-\u009f]/.test(trimmed) || !trimmed.isWellFormed()) {
    throw new AccessException(
      AccessExceptionCode.INVALID_GRANT,
      `a token name must be 1 to ${MAX_NAME} characters of valid Unicode without control characters (got ${name.length} characters)`,
    );
  }
  return trimmed;
}

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
    return principal ? AuthContext.of(principal, token) : AuthContext.anonymous();
  }

  /** Who is calling (UNAUTHENTICATED without a valid token). */
  viewer(auth: AuthContext): Principal {
    return auth.requirePrincipal();
  }

  /**
   * Creates a token. The caller needs `admin` on a pattern covering each requested pattern, and
   * `approve` there as well to hand out `approve`. The secret is returned once and never stored.
   */
  async createToken(auth: AuthContext, input: CreateTokenInput): Promise<{ token: string; record: TokenRecord }> {
    const caller = auth.requirePrincipal();
    const name = checkTokenName(input.name);
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
    // An empty string is a malformed id too (BAD_USER_INPUT), not "no principal".
    if (input.principalId !== null && input.principalId !== undefined) await this.checkPrincipal(auth, caller.principalId, input.principalId);
    if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
      throw new AccessException(AccessExceptionCode.INVALID_GRANT, 'expiresAt must be in the future');
    }
    const token = generateToken();
    const record = await this.tokens.create(auth.credential(), {
      principalId: input.principalId ?? undefined,
      principalName: name,
      name,
      hash: hashToken(token),
      prefix: tokenPrefixOf(token),
      grants: input.grants,
      expiresAt: input.expiresAt ?? null,
    });
    return { token, record };
  }

  /** Revokes a token: its own holder, or an admin covering all of its grants, may do it. */
  async revokeToken(auth: AuthContext, id: string): Promise<boolean> {
    const caller = auth.requirePrincipal();
    const target = isUuid(id) ? await this.tokens.findById(id) : undefined;
    if (!target)
      throw new AccessException(
        AccessExceptionCode.TOKEN_NOT_FOUND,
        `no token with id ${JSON.stringify(id.slice(0, 60))}: use the id createToken returned (a UUID)`,
      );
    const own = target.id === caller.tokenId;
    const coveredByAdmin = target.grants.every((g) =>
      caller.grants.some((held) => held.capabilities.includes(Capability.ADMIN) && patternCovers(held.namespacePattern, g.namespacePattern)),
    );
    if (!own && !coveredByAdmin) {
      throw new AccessException(AccessExceptionCode.FORBIDDEN, `revoking token ${target.id} needs "admin" on every namespace it grants`);
    }
    return this.tokens.revoke(id, auth.credential());
  }

  /**
   * Makes sure a bootstrap admin token exists. With `configured` (ADMIN_TOKEN) that token is
   * installed; otherwise one is generated only when none exists yet. Returns a newly generated
   * secret so the caller can show it once. Runs on the owner's connection at start
   * (`openDatabase`'s `atStart`): the runtime role cannot create tokens without a creator's secret.
   */
  async ensureBootstrapAdmin(configured: string | undefined): Promise<{ generated?: string }> {
    const grants: Grant[] = [{ namespacePattern: '*', capabilities: [Capability.ADMIN, Capability.APPROVE] }];
    if (configured) {
      if (!(await this.tokens.findActiveByHash(hashToken(configured)))) {
        await this.tokens.insertBootstrap({
          principalName: 'bootstrap-admin',
          name: 'bootstrap-admin (ADMIN_TOKEN)',
          hash: hashToken(configured),
          prefix: tokenPrefixOf(configured),
          grants,
        });
      }
      return {};
    }
    if (await this.tokens.hasBootstrapToken()) return {};
    const token = generateToken();
    await this.tokens.insertBootstrap({
      principalName: 'bootstrap-admin',
      name: 'bootstrap-admin (generated)',
      hash: hashToken(token),
      prefix: tokenPrefixOf(token),
      grants,
    });
    return { generated: token };
  }

  /**
   * Only an admin of every namespace ("admin" on "*") may issue a token to another principal: a
   * prefix admin attaching tokens to, say, the bootstrap admin's principal would act as it.
   */
  private async checkPrincipal(auth: AuthContext, callerPrincipalId: string, principalId: string): Promise<void> {
    if (!isUuid(principalId))
      throw new AccessException(
        AccessExceptionCode.INVALID_GRANT,
        `principalId must be a UUID (a principalId from viewer or a token); got ${JSON.stringify(principalId.slice(0, 60))}`,
      );
    if (principalId !== callerPrincipalId && !auth.can(Capability.ADMIN, '*')) {
      throw new AccessException(
        AccessExceptionCode.FORBIDDEN,
        'issuing a token to another principal needs "admin" on "*"; omit principalId to create a new principal, or pass your own',
      );
    }
    if (!(await this.tokens.principalExists(principalId))) {
      throw new AccessException(AccessExceptionCode.INVALID_GRANT, `principal ${principalId} does not exist`);
    }
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
