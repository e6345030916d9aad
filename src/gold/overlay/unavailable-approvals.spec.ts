import { AppErrorKind } from '../../common/app-exception';
import { Sql } from '../../infra/postgres/sql';
import { unavailableApprovals } from './unavailable-approvals';

describe('unavailableApprovals', () => {
  it('refuses every use with FORBIDDEN, saying approvals are not available', async () => {
    const use = { approvalId: 'a', namespace: 'n', action: 'OVERWRITE_OVERLAY' as const, params: { overlayId: 'o' }, executor: 'bob' };
    await expect(unavailableApprovals.consume({} as Sql, use)).rejects.toMatchObject({
      kind: AppErrorKind.FORBIDDEN,
      message: expect.stringMatching(/approvals are not available/),
    });
  });
});
