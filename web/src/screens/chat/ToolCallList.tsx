import type { ToolCall } from '../../api';
import { CollapsibleJson } from '../../components/JsonView';
import { useT } from '../../i18n/use-t';

export function ToolCallList({ toolCalls }: { toolCalls: ToolCall[] }) {
  const t = useT();
  if (toolCalls.length === 0) return <p className="muted small">{t('answer.noToolCalls')}</p>;
  return (
    <ol className="tool-call-list">
      {toolCalls.map((call, index) => (
        <li className="tool-call" data-testid="tool-call" key={index}>
          <div className="tool-call-head">
            <code className="tool-name">{call.toolName}</code>
            <span className={`badge ${call.success ? 'badge-ok' : 'badge-fail'}`}>
              {call.success ? t('answer.toolOk') : t('answer.toolFailed')}
            </span>
          </div>
          <CollapsibleJson label={t('answer.arguments')} value={call.arguments} />
          {call.success ? (
            <CollapsibleJson label={t('answer.result')} value={call.result} />
          ) : (
            <div className="tool-error">
              <strong>{t('answer.error')}:</strong> {call.error}
            </div>
          )}
        </li>
      ))}
    </ol>
  );
}
