import { ApprovalService } from './approval.service';
import { RequestContextOf } from './request-context';
import { TokenService } from './token.service';

/** The context of the access resolvers: tokens and approvals, no loaders. */
export type AccessContext = RequestContextOf<{ readonly tokens: TokenService; readonly approvals: ApprovalService }>;
