import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { Capability } from './capability';

@InputType()
export class GrantInput {
  @Field(() => String, { description: 'A namespace, a prefix ending in "*" (team-a/*), or "*".' })
  namespacePattern!: string;

  @Field(() => [Capability])
  capabilities!: Capability[];
}

@InputType()
export class TokenInput {
  @Field(() => String, { description: 'Who or what holds the token (shown in errors and lists).' })
  name!: string;

  @Field(() => ID, { nullable: true, description: 'Issue the token to an existing principal; default: a new principal.' })
  principalId?: string | null;

  @Field(() => [GrantInput])
  grants!: GrantInput[];

  @Field(() => Date, { nullable: true })
  expiresAt?: Date | null;
}

@ObjectType()
export class GrantInfo {
  @Field(() => String) namespacePattern!: string;
  @Field(() => [Capability]) capabilities!: Capability[];
}

@ObjectType({ description: 'A token as stored: never its secret, only its first characters.' })
export class ApiToken {
  @Field(() => ID) id!: string;
  @Field(() => ID) principalId!: string;
  @Field(() => String) name!: string;
  @Field(() => String) tokenPrefix!: string;
  @Field(() => [GrantInfo]) grants!: GrantInfo[];
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { nullable: true }) expiresAt!: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt!: Date | null;
}

@ObjectType()
export class NewToken {
  @Field(() => String, { description: 'The secret: shown this once, stored only as a SHA-256 hash.' })
  token!: string;
  @Field(() => ApiToken) info!: ApiToken;
}

@ObjectType({ description: 'The caller, as its token identifies it.' })
export class Viewer {
  @Field(() => ID) tokenId!: string;
  @Field(() => ID) principalId!: string;
  @Field(() => String) name!: string;
  @Field(() => [GrantInfo]) grants!: GrantInfo[];
}
