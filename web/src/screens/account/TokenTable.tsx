import { useEffect } from 'react';
import type { AccountToken } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useFormat } from '../../i18n/use-format';
import { useT } from '../../i18n/use-t';
import { tokenState, useTokensStore, type TokenState } from '../../stores/tokens';

const STATE_TONE: Record<TokenState, string> = { active: 'badge-ok', expired: 'badge-neutral', revoked: 'badge-fail' };

/** A user's tokens with when each was made, last used and expires, and a revoke button for those still working. */
export function TokenTable({ userId }: { userId: string }) {
  const t = useT();
  const format = useFormat();
  const entry = useTokensStore((state) => state.byUser[userId]);
  const revoking = useTokensStore((state) => state.revoking);
  const revokeError = useTokensStore((state) => (state.revokeError?.userId === userId ? state.revokeError.error : null));
  const load = useTokensStore((state) => state.load);
  const revoke = useTokensStore((state) => state.revoke);

  useEffect(() => {
    void load(userId);
  }, [load, userId]);

  if (!entry || entry.status === 'loading') return <Spinner label={t('common.loading')} />;
  if (entry.status === 'error') return <ErrorAlert error={entry.error} />;
  if (entry.tokens.length === 0) return <p className="empty">{t('tokens.empty')}</p>;

  return (
    <div className="table-scroll" data-testid="token-table" data-user-id={userId}>
      {revokeError ? <ErrorAlert error={revokeError} title={t('tokens.revokeFailed')} /> : null}
      <table className="table">
        <thead>
          <tr>
            <th>{t('tokens.label')}</th>
            <th>{t('tokens.state')}</th>
            <th>{t('tokens.created')}</th>
            <th>{t('tokens.lastUsed')}</th>
            <th>{t('tokens.expires')}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {entry.tokens.map((token: AccountToken) => {
            const state = tokenState(token);
            return (
              <tr key={token.id} data-testid="token-row" data-token-id={token.id} data-state={state}>
                <td>
                  {token.label || <span className="muted">{t('tokens.noLabel')}</span>}
                  {token.current ? <div className="muted small" data-testid="token-current">{t('tokens.current')}</div> : null}
                </td>
                <td>
                  <span className={`badge ${STATE_TONE[state]}`} data-testid="token-state">
                    {t(`tokens.state.${state}`)}
                  </span>
                </td>
                <td className="nowrap">{format.dateTime(token.createdAt)}</td>
                <td className="nowrap">{token.lastUsedAt ? format.relative(token.lastUsedAt) : t('tokens.never')}</td>
                <td className="nowrap">{token.revokedAt ? format.dateTime(token.revokedAt) : token.expiresAt ? format.dateTime(token.expiresAt) : t('tokens.neverExpires')}</td>
                <td className="nowrap">
                  {state === 'active' ? (
                    <button
                      type="button"
                      className="button button-small button-danger"
                      data-testid="token-revoke"
                      disabled={revoking[token.id]}
                      title={token.current ? t('tokens.revokeCurrentHint') : undefined}
                      onClick={() => void revoke(token)}
                    >
                      {revoking[token.id] ? t('common.saving') : token.current ? t('tokens.revokeCurrent') : t('tokens.revoke')}
                    </button>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
