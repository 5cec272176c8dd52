import { CollapsibleJson, JsonView } from '../../components/JsonView';
import { useT } from '../../i18n/use-t';

function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** Top-level fields as a key/value list (what reviewers scan), nested values as JSON, plus the whole object. */
export function StructuredOutputView({ output }: { output: Record<string, unknown> }) {
  const t = useT();
  const entries = Object.entries(output ?? {});
  if (entries.length === 0) return <p className="muted small">{t('answer.structuredEmpty')}</p>;
  return (
    <div className="structured" data-testid="structured-output">
      <dl className="kv">
        {entries.map(([key, value]) => (
          <div className="kv-row" key={key}>
            <dt>{key}</dt>
            <dd>
              {isPrimitive(value) ? (
                <span className="kv-text">{String(value)}</span>
              ) : Array.isArray(value) && value.every(isPrimitive) ? (
                <ul className="kv-list">
                  {value.map((item, index) => (
                    <li key={index}>{String(item)}</li>
                  ))}
                </ul>
              ) : (
                <JsonView value={value} />
              )}
            </dd>
          </div>
        ))}
      </dl>
      <CollapsibleJson label={t('common.showJson')} value={output} />
    </div>
  );
}
