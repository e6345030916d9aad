import { Arg, Ctx, ID, Mutation, Query, Resolver, UseMiddleware } from 'type-graphql';
import { AccessContext } from './access.context';
import { StorableTextArgs } from '../common/storable-args.middleware';
import { ApiToken, NewToken, TokenInput, Viewer } from './token.graphql';

@Resolver()
@UseMiddleware(StorableTextArgs)
export class TokenResolver {
  @Query(() => Viewer, { description: 'Who you are and what your token may do.' })
  viewer(@Ctx() ctx: AccessContext): Viewer {
    const p = ctx.services.tokens.viewer(ctx.auth);
    return Object.assign(new Viewer(), { tokenId: p.tokenId, principalId: p.principalId, name: p.name, grants: p.grants });
  }

  @Mutation(() => NewToken, { description: 'Issues a token (needs "admin" covering every requested pattern).' })
  async createToken(@Arg('input', () => TokenInput) input: TokenInput, @Ctx() ctx: AccessContext): Promise<NewToken> {
    const { token, record } = await ctx.services.tokens.createToken(ctx.auth, input);
    return Object.assign(new NewToken(), { token, info: Object.assign(new ApiToken(), record) });
  }

  @Mutation(() => Boolean, { description: 'Revokes a token at once; true when it was live.' })
  async revokeToken(@Arg('id', () => ID) id: string, @Ctx() ctx: AccessContext): Promise<boolean> {
    return ctx.services.tokens.revokeToken(ctx.auth, id);
  }
}
